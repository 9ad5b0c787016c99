package authority

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Why returns the derivation tree of a Board node of project: each
// node's atom, tier, rule and premises, who asserted it, or which Tool attested it under
// which release and the Sources bound for that Tool that may attest its predicate.
func (a *Authority) Why(ctx context.Context, c identity.Caller, project contract.ProjectID, node string) (contract.Why, error) {
	w, err := a.boards.Why(ctx, c, project, node, board.WhyLimits{})
	if err != nil {
		return contract.Why{}, err
	}
	srcs, err := a.attesting(ctx, c, project)
	if err != nil {
		return contract.Why{}, err
	}
	srcs.fill(&w.Root)
	return w, nil
}

// CaseDetail returns one Case of project with its receipt, the acceptance that certifies
// it and that node's derivation tree, and the facts the acceptance rests on.
func (a *Authority) CaseDetail(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID) (contract.CaseDetail, error) {
	cs, ev, err := a.boards.Evidence(ctx, c, project, id, board.WhyLimits{})
	if err != nil {
		return contract.CaseDetail{}, err
	}
	srcs, err := a.attesting(ctx, c, project)
	if err != nil {
		return contract.CaseDetail{}, err
	}
	d := contract.CaseDetail{Case: cs, Acceptance: ev.Acceptance, Why: ev.Why, Facts: ev.Facts}
	if d.Why != nil {
		srcs.fill(&d.Why.Root)
	}
	for i := range d.Facts {
		srcs.fill(&d.Facts[i])
	}
	if cs.Status == contract.CaseClosed {
		if d.Receipt, err = a.receipt(ctx, project, id); err != nil {
			return contract.CaseDetail{}, err
		}
	}
	return d, nil
}

// receipt reads the closure receipt of Case id from project's log: the data of its
// case.closed event.
func (a *Authority) receipt(ctx context.Context, project contract.ProjectID, id contract.CaseID) (*contract.ClosureReceipt, error) {
	var out *contract.ClosureReceipt
	err := eventlog.Scan(ctx, a.store, project, 0, -1, func(e store.Event) error {
		if e.Type != event.CaseClosed {
			return nil
		}
		var d event.CaseClosedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("decode the receipt in event %d: %w", e.Seq, err)
		}
		r := d.ClosureReceipt
		if r.CaseID == id {
			out = &r
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, fmt.Errorf("read the receipt of %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	return out, nil
}

// errFound ends a scan of the log that found what it looked for.
var errFound = errors.New("found")

// toolSources are the Sources bound on project's Connections, by the Tools locked there.
type toolSources map[string][]contract.Source

// attesting reads which Sources each Tool locked on a live Connection of project runs
// against.
func (a *Authority) attesting(ctx context.Context, c identity.Caller, project contract.ProjectID) (toolSources, error) {
	conns, err := a.dir.Connections(ctx, c, project)
	if err != nil {
		return nil, err
	}
	out := toolSources{}
	for _, cn := range conns {
		if cn.RevokedAt != nil {
			continue
		}
		locks, err := a.dir.ToolLocks(ctx, c, project, string(cn.ID))
		if err != nil {
			return nil, err
		}
		srcs, err := a.dir.Sources(ctx, c, project, string(cn.ID))
		if err != nil {
			return nil, err
		}
		for _, l := range locks {
			out[l.Tool] = append(out[l.Tool], srcs...)
		}
	}
	return out, nil
}

// fill adds to every Tool-attested node of the tree the Sources bound for its Tool whose
// words include the node's predicate.
func (ts toolSources) fill(n *contract.WhyNode) {
	if n.Attestation != nil && n.Atom != nil {
		// The node gets its own attestation: a Case's facts share theirs with its tree,
		// which is filled too, and each must list its Sources once.
		at := *n.Attestation
		at.Sources = nil
		n.Attestation = &at
		for _, s := range ts[at.Tool] {
			if slices.Contains(s.Words, n.Atom.Predicate) {
				at.Sources = append(at.Sources, s)
			}
		}
	}
	for i := range n.Premises {
		ts.fill(&n.Premises[i])
	}
}
