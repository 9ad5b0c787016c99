package board

import (
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// maxConsume bounds how many base facts one Consume effect retracts.
const maxConsume = 1024

// applyEffects applies an evaluated Action's effects in one transaction.
func (b *Board) applyEffects(by contract.Principal, tier contract.Tier, ev *evaluation) ([]contract.NodeChange, error) {
	t := b.begin()
	if err := b.effectsIn(t, by, tier, ev); err != nil {
		t.rollback()
		return nil, err
	}
	return t.commit(), nil
}

// effectsIn asserts the Action's effects at tier and retracts what its Consume effects
// match. For an executed Action, tier is the Tool's: the Worker ran with exactly these
// arguments and reported success, so the effect is as strong as that report. For a
// Board-only Action it is the caller's, so an agent's effects are asserted.
func (b *Board) effectsIn(t *txn, by contract.Principal, tier contract.Tier, ev *evaluation) error {
	for _, eff := range ev.action.Effects {
		a := substituteAtom(eff.Atom, ev.args)
		if eff.Consume {
			if err := b.consume(t, a, ev.action.Name); err != nil {
				return err
			}
			continue
		}
		if !a.Ground() {
			return contract.Errorf(contract.CodeCapabilityInvalid,
				"the effect %s of %s has a variable no parameter, binding or business key fills; fix the capability", eff.Atom, ev.action.Name)
		}
		n := &node{atom: a, rec: contract.Node{Kind: contract.NodeFact, CreatedBy: by, Tier: tier, Atom: ptr(wireAtom(a))}}
		n.rec.NodeID = b.mintID(n)
		if err := b.addOnce(t, n, true); err != nil {
			return err
		}
	}
	return nil
}

// consume retracts the base facts matching a (a negated effect consumes the positive
// fact it names).
func (b *Board) consume(t *txn, a engine.Atom, action string) error {
	pattern := engine.Atom{Pred: a.Pred, Args: a.Args}
	n := 0
	for ; n < maxConsume; n++ {
		id := ""
		for e := range b.eng.Match(pattern) {
			if node, ok := b.nodes[e.ID]; ok && node.rec.Kind == contract.NodeFact {
				id = e.ID
				break
			}
		}
		if id == "" {
			break
		}
		if err := t.remove(id); err != nil {
			return err
		}
	}
	if n == 0 {
		return contract.Errorf(contract.CodeActionBlocked,
			"%s consumes %s, but no such fact is on the Board; establish it first", action, pattern)
	}
	return nil
}

// ApplyOutcome applies what a Worker reported for req, a request [Board.ApplyAction]
// returned. by is the Tool's principal with its Source's tier and words,
// which the authority checked. A failed outcome changes nothing. A successful one turns
// each returned row into facts through the Action's Returns mapping — "$column" takes the
// row's column (or, when the row has none, the request argument of that name); any other
// text is a string constant — and then applies the Action's effects, in one transaction.
func (b *Board) ApplyOutcome(by Author, req contract.ExecutionRequest, out contract.ExecutionOutcome) (ActionResult, error) {
	a, ok := b.actions[req.Action]
	if !ok || a.Execution == nil || a.Execution.Tool != req.Tool {
		return ActionResult{}, contract.Errorf(contract.CodeOutcomeMismatch,
			"the outcome names %s with tool %s, which no installed executed Action declares; report it against the request it answers", req.Action, req.Tool)
	}
	if by.Principal.Kind() != contract.PrincipalTool {
		return ActionResult{}, contract.Errorf(contract.CodeInvalidArgument,
			"an execution outcome is written by the Tool that ran, not %s", by.Principal)
	}
	tier, err := by.factTier()
	if err != nil {
		return ActionResult{}, err
	}
	if !out.OK {
		return ActionResult{}, nil
	}
	ev := &evaluation{action: a, args: engine.Bindings{}}
	for k, v := range req.Args {
		ev.args[k], err = engine.ValueOf(v)
		if err != nil {
			return ActionResult{}, err
		}
	}
	if req.CaseID != "" {
		c, ok := b.cases[req.CaseID]
		if !ok {
			return ActionResult{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; the request names a Case this Board never opened", req.CaseID)
		}
		if c.Status != contract.CaseClosed {
			ev.c = c
		}
	}
	t := b.begin()
	for i, row := range out.Rows {
		for _, ret := range a.Execution.Returns {
			n, err := b.returnedFact(by, tier, ret, row, req.Args)
			if err != nil {
				t.rollback()
				return ActionResult{}, contract.Errorf(contract.CodeOutcomeMismatch, "row %d of %s: %s", i, req.Action, teachingOf(err))
			}
			if err := b.addOnce(t, n, true); err != nil {
				t.rollback()
				return ActionResult{}, err
			}
		}
	}
	if err := b.effectsIn(t, by.Principal, tier, ev); err != nil {
		t.rollback()
		return ActionResult{}, err
	}
	return ActionResult{Changes: t.commit(), Case: b.markTerminal(ev)}, nil
}

// returnedFact builds the fact one Returns mapping makes of one row.
func (b *Board) returnedFact(by Author, tier contract.Tier, ret Return, row, args contract.Args) (*node, error) {
	vals := contract.Args{}
	for arg, spec := range ret.Args {
		col, isCol := strings.CutPrefix(spec, "$")
		if !isCol {
			vals[arg] = contract.StringValue(spec)
			continue
		}
		v, ok := row[col]
		if !ok {
			v, ok = args[col]
		}
		if !ok {
			return nil, contract.Errorf(contract.CodeOutcomeMismatch,
				"the row has no column %s for %s.%s; the Tool's rows must carry every column the Action's returns name", col, ret.Predicate, arg)
		}
		vals[arg] = v
	}
	a, err := engineAtom(ret.Predicate, vals, false, false, nil)
	if err != nil {
		return nil, err
	}
	if err := by.checkWord(a.Pred); err != nil {
		return nil, err
	}
	n := &node{atom: a, rec: contract.Node{Kind: contract.NodeFact, CreatedBy: by.Principal, Tier: tier, Atom: ptr(wireAtom(a))}}
	n.rec.NodeID = b.mintID(n)
	return n, nil
}
