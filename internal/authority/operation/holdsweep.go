package operation

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// Under a recovery policy with hold_cases = true the authority pauses a Case while one of
// its executed Actions needs a person to settle its outcome (needs_person):
// a hold of the recovery policy, one per such Operation, which no member releases by hand
// and which the sweep releases once the Operation is settled (a member reconciles it) or
// the policy in force no longer holds Cases (docs/policies.md#recovery_policy).

// holdPolicy is the policy that owns the authority's holds.
const holdPolicy = string(contract.PolicyRecovery)

// SweepHolds places the recovery policy's holds each project's Operations call for and
// releases those they no longer do, and returns how many it placed or released. Each runs
// in its own Board write, and a hold another instance placed first is left as it is.
func (o *Operations) SweepHolds(ctx context.Context) (int, error) {
	if o.policies == nil {
		return 0, nil // the built-in recovery policy holds no Case
	}
	ps, err := o.store.Projects(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep holds: %w", err)
	}
	n := 0
	for _, p := range ps {
		m, err := o.sweepHoldsOf(ctx, contract.ProjectID(p.ID))
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (o *Operations) sweepHoldsOf(ctx context.Context, project contract.ProjectID) (int, error) {
	_, d, err := o.policies.InForce(ctx, project, contract.PolicyRecovery)
	if err != nil {
		return 0, err
	}
	want := map[contract.CaseID]map[string]string{} // Case → Operation ref → reason
	if d.Recovery != nil && d.Recovery.HoldCases {
		if want, err = o.unsettledByCase(ctx, project); err != nil {
			return 0, err
		}
	}
	// A hold to place names its subject and reason; one to release, its id.
	type holdAct struct {
		caseID                contract.CaseID
		hold, subject, reason string
	}
	var place, releases []holdAct
	err = o.boards.View(ctx, project, func(b *board.Board) error {
		for _, c := range b.Cases() {
			if c.Status == contract.CaseClosed {
				continue
			}
			held := map[string]bool{}
			for _, h := range c.Holds {
				if h.Owner != contract.HoldPolicy || h.Policy != holdPolicy {
					continue
				}
				held[h.Subject] = true
				if _, ok := want[c.CaseID][h.Subject]; !ok {
					releases = append(releases, holdAct{caseID: c.CaseID, hold: h.ID})
				}
			}
			for _, ref := range slices.Sorted(maps.Keys(want[c.CaseID])) {
				if !held[ref] {
					place = append(place, holdAct{caseID: c.CaseID, subject: ref, reason: want[c.CaseID][ref]})
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range place {
		_, err := o.boards.PolicyHold(ctx, project, p.caseID, holdPolicy, p.subject, authorityActor, p.reason)
		switch contract.CodeOf(err) {
		case "":
			n++
		case contract.CodeAlreadyExists, contract.CodeCaseClosed, contract.CodeInvalidArgument:
			// Another instance held it first, the Case closed, or it has all the holds it
			// takes: the next sweep sees the Case as it is then.
		default:
			return n, fmt.Errorf("hold Case %s for %s: %w", p.caseID, p.subject, err)
		}
	}
	for _, r := range releases {
		_, err := o.boards.PolicyRelease(ctx, project, r.caseID, r.hold, holdPolicy, authorityActor)
		switch contract.CodeOf(err) {
		case "":
			n++
		case contract.CodeHoldNotFound:
			// Another instance released it first.
		default:
			return n, fmt.Errorf("release hold %s of Case %s: %w", r.hold, r.caseID, err)
		}
	}
	return n, nil
}

// unsettledByCase returns, by Case, the executed Actions of project whose outcome only a
// person can settle, as Operation refs with the reason a hold for each gives.
func (o *Operations) unsettledByCase(ctx context.Context, project contract.ProjectID) (map[contract.CaseID]map[string]string, error) {
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return nil, err
	}
	out := map[contract.CaseID]map[string]string{}
	for agent, ops := range l.ops {
		for _, op := range ops {
			if op.execution == nil || op.execution.CaseID == "" || op.state != contract.OpNeedsPerson {
				continue
			}
			ref := opRef(agent, op.ordinal)
			if out[op.execution.CaseID] == nil {
				out[op.execution.CaseID] = map[string]string{}
			}
			out[op.execution.CaseID][ref] = fmt.Sprintf("the outcome of %s (%s) is %s; a member settles it with docket reconcile %s done|failed", ref, op.label, op.state, ref)
		}
	}
	return out, nil
}
