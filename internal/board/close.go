package board

import (
	"maps"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// CloseResult is what closing a Case produced: the Case record, its receipt, and the
// node changes to persist (an exploration Case's local nodes are deleted).
type CloseResult struct {
	Case    contract.Case
	Receipt contract.ClosureReceipt
	Changes []contract.NodeChange
}

// CloseCase closes Case id with disposition. Completed succeeds only on
// a certified root (see [Board.Certify]); cancelled, failed, abandoned and superseded
// need a reason (case_reason_required). Closing an exploration Case removes its Case-local
// nodes and marks the receipt exploratory.
func (b *Board) CloseCase(by contract.Principal, id contract.CaseID, disposition contract.Disposition, reason string, at time.Time) (CloseResult, error) {
	c, ok := b.cases[id]
	switch {
	case !ok:
		return CloseResult{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the caseId in the View", id)
	case c.Status == contract.CaseClosed:
		return CloseResult{}, contract.Errorf(contract.CodeCaseClosed, "Case %s is already closed (%s)", id, c.Disposition)
	case c.Status == contract.CasePaused:
		return CloseResult{}, pausedError(c)
	}
	if _, err := contract.ParseDisposition(string(disposition)); err != nil {
		return CloseResult{}, err
	}
	reason = strings.TrimSpace(reason)
	rcpt := contract.ClosureReceipt{
		CaseID: c.CaseID, Root: c.Root, CaseType: c.CaseType, BusinessKey: maps.Clone(c.BusinessKey),
		Disposition: disposition, Reason: reason, Release: c.Release, ReleaseDigest: c.ReleaseDigest,
		ContractDigest: c.ContractDigest, KeyDigest: c.KeyDigest, Exploratory: c.Exploration,
		ClosedBy: by, At: at.UTC(),
	}
	if disposition == contract.DispositionCompleted {
		acc, err := b.Certify(id)
		if err != nil {
			return CloseResult{}, err
		}
		d, err := b.eng.Explain(acc.NodeID)
		if err != nil {
			return CloseResult{}, refuse(err, "explain the acceptance")
		}
		rcpt.Certified, rcpt.Acceptance = true, &acc
		rcpt.ExplanationDigest = digest(mustJSON(explanation(d))).String()
	} else if reason == "" {
		return CloseResult{}, contract.Errorf(contract.CodeCaseReasonRequired,
			"closing Case %s as %s needs a reason; say in one sentence why it ends without completion", id, disposition)
	}
	t := b.begin()
	if c.Exploration {
		for _, nid := range b.recent {
			if n, ok := b.nodes[nid]; ok && n.rec.CaseID == id {
				if err := t.remove(nid); err != nil {
					t.rollback()
					return CloseResult{}, err
				}
			}
		}
	}
	changes := t.commit()
	closedAt := at.UTC()
	b.keepCase(c.CaseID)
	c.Status, c.Disposition, c.Reason, c.ClosedAt = contract.CaseClosed, disposition, reason, &closedAt
	delete(b.open, openKey(c))
	return CloseResult{Case: caseCopy(c), Receipt: rcpt, Changes: changes}, nil
}

// Certify returns the acceptance node that certifies Case id's root: the Case Type's
// acceptance atom for the business key, derived by rules (an asserted fact never counts)
// with its best derivation at or above the floor. Refusals say what is missing:
// case_not_certified (nothing matches, or the Case Type has no acceptance),
// case_acceptance_not_derived (it holds only as an asserted fact),
// case_acceptance_floor_too_weak (derived, below the floor).
func (b *Board) Certify(id contract.CaseID) (contract.Node, error) {
	c, ok := b.cases[id]
	if !ok {
		return contract.Node{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the caseId in the View", id)
	}
	ct := b.caseTypes[c.CaseType]
	if ct.Acceptance == "" {
		return contract.Node{}, contract.Errorf(contract.CodeCaseNotCertified,
			"the %s Case Type declares no acceptance, so its Cases never complete; close it as cancelled or abandoned with a reason", c.CaseType)
	}
	pattern, err := keyAtom(ct.Acceptance, c.BusinessKey)
	if err != nil {
		return contract.Node{}, err
	}
	floor := ct.Floor
	if !floor.Valid() {
		floor = contract.TierAttested
	}
	var best, asserted *engine.Entry
	for e := range b.eng.Match(pattern) {
		e.DerivedTier = b.derivedTier(e)
		switch {
		case e.Derived && (best == nil || e.DerivedTier.AtLeast(best.DerivedTier)):
			best = &e
		case !e.Derived && asserted == nil:
			asserted = &e
		}
	}
	switch {
	case best == nil && asserted != nil:
		return contract.Node{}, contract.Errorf(contract.CodeCaseAcceptanceNotDerived,
			"%s holds only as an asserted fact (node %s); acceptance counts only when the capability's rules derive it from attested evidence — run the Actions that produce that evidence",
			pattern, asserted.ID)
	case best == nil:
		return contract.Node{}, contract.Errorf(contract.CodeCaseNotCertified,
			"%s is not derived yet; the root %s is not certified — produce the evidence its rules need (see the Actions in the View)", pattern, c.Root)
	case !best.DerivedTier.AtLeast(floor):
		return contract.Node{}, contract.Errorf(contract.CodeCaseAcceptanceFloor,
			"%s is derived only at tier %s, below the floor %s; its derivation rests on weaker premises — replace them with facts loaded through a Tool (attested)",
			pattern, best.DerivedTier, floor)
	}
	n := b.entryNode(*best)
	if best.Base {
		// Someone also asserted it: the receipt cites the derivation, never the assertion.
		n = contract.Node{NodeID: best.ID, Atom: ptr(wireAtom(best.Atom))}
	}
	n.Kind, n.Tier = contract.NodeDerived, best.DerivedTier
	return n, nil
}

// derivedTier is the tier of e's best derivation alone. The engine reports it as
// Entry.DerivedTier; when it leaves it unset, a fact that is only derived has it as its
// tier, and for a fact that is also asserted the Board re-derives it: each rule whose head
// predicate matches is queried with the head bound to the fact, and the best row, capped
// by the rule's tier, is the derived tier. An asserted copy of a fact therefore never
// hides, nor stands in for, its derivation.
func (b *Board) derivedTier(e engine.Entry) contract.Tier {
	switch {
	case e.DerivedTier.Valid():
		return e.DerivedTier
	case !e.Derived:
		return 0
	case !e.Base:
		return e.Tier
	}
	best := contract.Tier(0)
	for _, r := range b.eng.Rules() {
		if r.Head.Pred != e.Atom.Pred || r.Head.Neg != e.Atom.Neg || len(r.Head.Args) != len(e.Atom.Args) {
			continue
		}
		vals, ok := unify(r.Head, e.Atom)
		if !ok {
			continue
		}
		rows, err := b.eng.Query(substitute(r.Body, vals))
		if err != nil {
			continue
		}
		for _, row := range rows {
			t := contract.Weaker(row.Tier, r.Tier)
			if best == 0 || t.AtLeast(best) {
				best = t
			}
		}
	}
	return best
}

// unify binds the variables of a rule head to the values of a ground fact; it fails on
// an aggregate head, a differing constant or argument name.
func unify(head, fact engine.Atom) (engine.Bindings, bool) {
	vals := engine.Bindings{}
	for i, arg := range head.Args {
		fv := fact.Args[i]
		switch {
		case arg.Name != fv.Name || arg.Term.Agg != "":
			return nil, false
		case !arg.Term.IsVar():
			if arg.Term.Val != fv.Term.Val {
				return nil, false
			}
		default:
			if v, seen := vals[arg.Term.Var]; seen && v != fv.Term.Val {
				return nil, false
			}
			vals[arg.Term.Var] = fv.Term.Val
		}
	}
	return vals, true
}

// explained is the canonical form of an explanation tree that a receipt's digest covers.
type explained struct {
	ID       string      `json:"id"`
	Atom     string      `json:"atom"`
	Tier     string      `json:"tier"`
	Base     bool        `json:"base,omitempty"`
	Rule     string      `json:"rule,omitempty"`
	Premises []explained `json:"premises,omitempty"`
}

func explanation(d *engine.Derivation) explained {
	out := explained{ID: d.ID, Atom: d.Atom.String(), Tier: d.Tier.String(), Base: d.Base, Rule: d.Rule}
	for _, p := range d.Premises {
		out.Premises = append(out.Premises, explanation(p))
	}
	return out
}
