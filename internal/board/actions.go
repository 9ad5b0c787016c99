package board

import (
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Setup is what the authority knows about the project's setup that the pure Board cannot:
// which Tools are locked on a Connection with a bound Source of a fitting type. An executed
// Action whose Tool is not in Tools is blocked with needs_setup.
type Setup struct {
	Tools map[string]bool // "vendor.name@N" → usable
	// Allow is the caller's profile allow-list: an Action it refuses is listed blocked
	// with not_in_profile. nil allows everything.
	Allow *contract.AllowList
}

// ActionResult is the outcome of [Board.ApplyAction]: either the Board-only effects were
// applied (Changes), or the Action needs an execution the authority dispatches (Request).
// Case is the Case record to persist when it changed (a once_per_case Action succeeded).
type ActionResult struct {
	Request *contract.ExecutionRequest
	Changes []contract.NodeChange
	Case    *contract.Case
}

// evaluation is an Action checked against the Board for one call: its arguments after
// bindings and the tier its effects may claim.
type evaluation struct {
	action Action
	c      *contract.Case // nil when the call names no Case
	args   engine.Bindings
	bound  []string
}

// trustFloor is the tier premises must reach to bind parameters: the Case Type's floor,
// else attested.
func (b *Board) trustFloor(c *contract.Case) contract.Tier {
	if c != nil {
		if f := b.caseTypes[c.CaseType].Floor; f.Valid() {
			return f
		}
	}
	return contract.TierAttested
}

// ApplyAction applies the Action name in Case caseID (may be empty for a Case-free call)
// with the caller's params.
//
// The business key's arguments bind the params and variables of the same names, so an
// Action in a Case works on that Case's subject; a caller may repeat a key value but not
// pass another (case_business_key). Params are checked
// against their declared types (action_param); a bound param passed by the caller is
// refused (binding_supplied). Bound params are taken from precondition rows whose premises
// are at or above the trust floor (the Case Type's floor, else attested): none gives
// binding_missing, several different values binding_ambiguous.
//
// A Board-only Action (no Execution) applies its effects now, at the caller's tier;
// Consume effects retract the matching base facts. An executed Action changes nothing and
// returns the ExecutionRequest for the authority to dispatch (after any decision); its
// outcome arrives through [Board.ApplyOutcome]. Whether the Tool is usable (needs_setup)
// is the authority's check at dispatch. A once_per_case Action is recorded when its
// outcome lands, so the authority must not dispatch a second request for it while one is
// unresolved (its write gate already holds that).
func (b *Board) ApplyAction(by Author, caseID contract.CaseID, name string, params contract.Args) (ActionResult, error) {
	ev, err := b.evaluate(caseID, name, params)
	if err != nil {
		return ActionResult{}, err
	}
	if ev.action.Execution != nil {
		req := ev.request(caseID)
		return ActionResult{Request: &req}, nil
	}
	tier, err := by.factTier()
	if err != nil {
		return ActionResult{}, err
	}
	changes, err := b.applyEffects(by.Principal, tier, ev)
	if err != nil {
		return ActionResult{}, err
	}
	return ActionResult{Changes: changes, Case: b.markTerminal(ev)}, nil
}

// Evaluate is a dry run of [Board.ApplyAction]: it checks the call as ApplyAction would
// and returns what it would run — the Action with its exact arguments after bindings
// (Args, with the bound params named in Bound) and its Approval; for an executed Action
// also its Tool, Kind and SourceTypes. It changes nothing. The authority binds a Request
// for a Board-only Action to these arguments, so a decision covers the values the
// Board's premises supply, not only the caller's params.
//
// Evaluate refuses what ApplyAction would refuse before it writes: an unknown Action,
// wrong params, a dead or closed Case, failed preconditions, a missing or ambiguous
// binding, and for a Board-only Action an Author who may not write.
func (b *Board) Evaluate(by Author, caseID contract.CaseID, name string, params contract.Args) (contract.ExecutionRequest, error) {
	ev, err := b.evaluate(caseID, name, params)
	if err != nil {
		return contract.ExecutionRequest{}, err
	}
	if ev.action.Execution == nil {
		if _, err := by.factTier(); err != nil {
			return contract.ExecutionRequest{}, err
		}
	}
	return ev.request(caseID), nil
}

// request is the evaluated call as the authority sees it; the Tool fields are empty for
// a Board-only Action.
func (ev *evaluation) request(caseID contract.CaseID) contract.ExecutionRequest {
	a := ev.action
	req := contract.ExecutionRequest{Action: a.Name, CaseID: caseID, Approval: approvalOf(a),
		Args: wireBindings(ev.args, a), Bound: ev.bound}
	if a.Execution != nil {
		req.Tool, req.Kind, req.SourceTypes, req.Source = a.Execution.Tool, string(a.Execution.Kind), a.Execution.SourceTypes, a.Execution.Source
	}
	return req
}

func approvalOf(a Action) string {
	if a.Approval == "" {
		return ApprovalNone
	}
	return a.Approval
}

// evaluate checks the call and computes the Action's bound arguments.
func (b *Board) evaluate(caseID contract.CaseID, name string, params contract.Args) (*evaluation, error) {
	a, ok := b.actions[name]
	if !ok {
		return nil, contract.Errorf(contract.CodeActionUnknown, "no Action %q is installed; use one listed in the View", name)
	}
	ev := &evaluation{action: a, args: engine.Bindings{}}
	if caseID != "" {
		c, err := b.liveCase(caseID)
		if err != nil {
			return nil, err
		}
		ev.c = c
		if b.done(c, name) {
			return nil, contract.Errorf(contract.CodeActionOnce,
				"%s is a terminal Action and already succeeded in Case %s; it runs once per Case", name, caseID)
		}
		for k, v := range c.BusinessKey {
			ev.args[k], _ = engine.ValueOf(v) // checked when the Case opened
		}
	}
	if why := b.directBlocked(a, ev.c); why != "" {
		return nil, contract.Errorf(contract.CodeActionBlocked, "%s", why)
	}
	if err := b.bindParams(ev, params); err != nil {
		return nil, err
	}
	rows, err := b.eng.Query(substitute(a.Preconditions, ev.args))
	if err != nil {
		return nil, refuse(err, "evaluate the preconditions of "+name)
	}
	if len(rows) == 0 {
		return nil, contract.Errorf(contract.CodeActionBlocked,
			"the preconditions of %s do not hold (%s); establish them first", name, literalsText(a.Preconditions))
	}
	floor := b.trustFloor(ev.c)
	for _, bd := range a.Bindings {
		vals := trustedValues(rows, bd.Var, floor)
		switch len(vals) {
		case 0:
			return nil, contract.Errorf(contract.CodeBindingMissing,
				"no premise at tier %s or stronger binds %s of %s; load the fact it comes from through a Tool — asserted facts never bind", floor, bd.Param, name)
		case 1:
			ev.args[bd.Param] = vals[0]
			ev.bound = append(ev.bound, bd.Param)
		default:
			return nil, contract.Errorf(contract.CodeBindingAmbiguous,
				"trusted premises give %d different values for %s of %s; retract or revise the stale ones so exactly one remains", len(vals), bd.Param, name)
		}
	}
	slices.Sort(ev.bound)
	return ev, nil
}

// directBlocked says why the direct Action a may not run in Case c (nil: no Case), or
// "" when it may, or a is not direct: a direct Action has no rules behind it, so it runs
// only where the Case Type says agents explore or opts in.
func (b *Board) directBlocked(a Action, c *contract.Case) string {
	if !a.Direct {
		return ""
	}
	if c == nil {
		return a.Name + " is the direct Action of a locked Tool and runs in a Case; open an exploration Case (or one whose Case Type sets direct_actions) and apply it there"
	}
	if ct := b.caseTypes[c.CaseType]; ct.Exploration || ct.DirectActions {
		return ""
	}
	return a.Name + " is the direct Action of a locked Tool; Case Type " + c.CaseType + " does not take direct Actions (direct_actions), so apply it in an exploration Case"
}

// trustedValues returns the distinct values rows give variable, counting only rows whose
// premises are at floor or stronger.
func trustedValues(rows []engine.Row, variable string, floor contract.Tier) []engine.Value {
	var vals []engine.Value
	for _, r := range rows {
		if v, ok := r.Bindings[variable]; ok && r.Tier.AtLeast(floor) && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return vals
}

// bindParams checks the caller's params against the declaration and binds them.
func (b *Board) bindParams(ev *evaluation, params contract.Args) error {
	a := ev.action
	for k, v := range params {
		if slices.ContainsFunc(a.Bindings, func(bd Binding) bool { return bd.Param == k }) {
			return contract.Errorf(contract.CodeBindingSupplied,
				"%s of %s is bound by the Board from trusted premises; do not pass it", k, a.Name)
		}
		i := slices.IndexFunc(a.Params, func(p Param) bool { return p.Name == k })
		if i < 0 {
			return contract.Errorf(contract.CodeActionParam, "%s takes no parameter %s; pass only %s", a.Name, k, paramNames(a))
		}
		if _, isVar := v.Var(); isVar || !typeFits(a.Params[i].Type, v) {
			return contract.Errorf(contract.CodeActionParam, "parameter %s of %s must be a %s; %s is not", k, a.Name, a.Params[i].Type, v)
		}
		ev2, _ := engine.ValueOf(v)
		if key, fromKey := ev.args[k]; fromKey && key != ev2 {
			return contract.Errorf(contract.CodeCaseBusinessKey,
				"%s is %s in Case %s, not %s; pass the Case's own value or leave it out", k, key, ev.c.CaseID, v)
		}
		ev.args[k] = ev2
	}
	for _, p := range a.Params {
		bound := slices.ContainsFunc(a.Bindings, func(bd Binding) bool { return bd.Param == p.Name })
		if _, ok := ev.args[p.Name]; !ok && !p.Optional && !bound {
			return contract.Errorf(contract.CodeActionParam, "%s needs the parameter %s (%s); pass it", a.Name, p.Name, p.Type)
		}
	}
	return nil
}

func paramNames(a Action) string {
	var names []string
	for _, p := range a.Params {
		if !slices.ContainsFunc(a.Bindings, func(bd Binding) bool { return bd.Param == p.Name }) {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}

func typeFits(t ParamType, v contract.Value) bool {
	switch t {
	case ParamString:
		return v.Kind() == contract.ValueString
	case ParamInt:
		return v.Kind() == contract.ValueInt
	case ParamFloat:
		return v.Kind() == contract.ValueFloat || v.Kind() == contract.ValueInt
	case ParamBool:
		return v.Kind() == contract.ValueBool
	}
	return false
}

// substitute replaces the variables of lits bound in vals with constants.
func substitute(lits []engine.Literal, vals engine.Bindings) []engine.Literal {
	out := make([]engine.Literal, len(lits))
	for i, l := range lits {
		out[i] = engine.Literal{Atom: substituteAtom(l.Atom, vals), NAF: l.NAF}
	}
	return out
}

func substituteAtom(a engine.Atom, vals engine.Bindings) engine.Atom {
	args := slices.Clone(a.Args)
	for j, arg := range args {
		if v, ok := vals[arg.Term.Var]; ok && arg.Term.IsVar() {
			args[j].Term = engine.C(v)
		}
	}
	return engine.Atom{Pred: a.Pred, Neg: a.Neg, Args: args}
}

func literalsText(lits []engine.Literal) string {
	var parts []string
	for _, l := range lits {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, ", ")
}

// wireBindings returns the arguments an execution receives: the declared params and
// bindings with their values (the business key included when it names a param).
func wireBindings(vals engine.Bindings, a Action) contract.Args {
	out := contract.Args{}
	for _, p := range a.Params {
		if v, ok := vals[p.Name]; ok {
			out[p.Name] = v.Wire()
		}
	}
	for _, bd := range a.Bindings {
		if v, ok := vals[bd.Param]; ok {
			out[bd.Param] = v.Wire()
		}
	}
	return out
}

func (b *Board) done(c *contract.Case, action string) bool {
	return slices.Contains(c.Terminal, action)
}

// markTerminal records a once_per_case Action's success and returns the changed Case.
func (b *Board) markTerminal(ev *evaluation) *contract.Case {
	if ev.c == nil || !slices.Contains(b.caseTypes[ev.c.CaseType].OncePerCase, ev.action.Name) {
		return nil
	}
	b.keepCase(ev.c.CaseID)
	ev.c.Terminal = append(ev.c.Terminal, ev.action.Name)
	c := caseCopy(ev.c)
	return &c
}
