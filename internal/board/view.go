package board

import (
	"maps"
	"slices"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Bounds of the Board View. Each list stops at its bound and says so
// with truncated, so that a View stays small whatever the Board holds. Every tool result
// carries the View twice (text block and structuredContent), and nodes are most of its
// bytes, so ViewMaxNodes sets the cost of every call and the context it spends; a caller
// finds further facts with QueryBoard.
const (
	ViewMaxCases     = 20 // Case directory: open Cases newest first, then closed ones
	ViewMaxCaseTypes = 20
	ViewMaxRoots     = 5  // focused roots, in focus order
	ViewMaxGaps      = 5  // gaps per root
	ViewMaxNodes     = 20 // focused roots and their derived facts first, then the newest nodes
	ViewMaxActions   = 30
)

// ViewRequest says for whom a View is computed: the caller, the Cases it focuses (the
// first is the one Action readiness is computed for) and the setup the authority knows.
type ViewRequest struct {
	Principal contract.Principal
	Focus     []contract.CaseID
	Setup     Setup
}

// View computes the bounded Board View for req. The caller sees every
// Case in the directory and every node except the Case-local nodes of Cases it does not
// focus. Unknown Case ids in Focus are skipped.
func (b *Board) View(req ViewRequest) contract.View {
	var focus []*contract.Case
	for _, id := range req.Focus {
		if c, ok := b.cases[id]; ok && !slices.Contains(focus, c) {
			focus = append(focus, c)
		}
	}
	var primary *contract.Case
	if len(focus) > 0 {
		primary = focus[0]
	}
	return contract.View{
		Position:  b.position(req.Principal, primary),
		Cases:     b.caseDirectory(),
		CaseTypes: b.caseTypeList(),
		Roots:     b.roots(focus),
		Nodes:     b.viewNodes(focus),
		Actions:   b.readiness(primary, req.Setup),
	}
}

func (b *Board) position(p contract.Principal, primary *contract.Case) contract.Position {
	pos := contract.Position{Writes: contract.PositionOpen, NewCases: contract.PositionOpen, Rules: contract.PositionOpen}
	switch {
	case p.Kind() == contract.PrincipalCapability || p.Kind() == "":
		pos.Writes = "only agents, tools and members write to the Board"
	case primary != nil && primary.Status == contract.CaseClosed:
		pos.Writes = "the focused Case " + string(primary.CaseID) + " is closed; focus or open another Case"
	case primary != nil && primary.Status == contract.CasePaused:
		pos.Writes = "the focused Case " + string(primary.CaseID) + " is paused by " + holdList(primary) + "; wait for its holds to be released"
	}
	if p.Kind() != contract.PrincipalAgent && p.Kind() != contract.PrincipalMember {
		pos.NewCases = "only agents and members open Cases"
	}
	switch p.Kind() {
	case contract.PrincipalMember:
	case contract.PrincipalAgent:
		if !b.cfg.AllowAgentRules && (primary == nil || !primary.Exploration || primary.Status != contract.CaseRunning) {
			pos.Rules = "agent rules are Case-local: add them with the caseId of a running exploration Case (case_local_forbidden elsewhere)"
		}
	default:
		pos.Rules = "only agents and members add rules"
	}
	return pos
}

func (b *Board) caseDirectory() contract.Bounded[contract.CaseEntry] {
	out := contract.Bounded[contract.CaseEntry]{Items: []contract.CaseEntry{}}
	for _, closed := range []bool{false, true} {
		for _, id := range slices.Backward(b.caseSeq) {
			c := b.cases[id]
			if (c.Status == contract.CaseClosed) != closed {
				continue
			}
			if len(out.Items) == ViewMaxCases {
				out.Truncated = true
				return out
			}
			out.Items = append(out.Items, contract.CaseEntry{CaseID: c.CaseID, Root: c.Root, CaseType: c.CaseType,
				BusinessKey: maps.Clone(c.BusinessKey), Status: c.Status})
		}
	}
	return out
}

func (b *Board) caseTypeList() contract.Bounded[contract.CaseTypeEntry] {
	out := contract.Bounded[contract.CaseTypeEntry]{Items: []contract.CaseTypeEntry{}}
	for _, name := range b.caseTypeSeq {
		if len(out.Items) == ViewMaxCaseTypes {
			out.Truncated = true
			break
		}
		ct := b.caseTypes[name]
		out.Items = append(out.Items, contract.CaseTypeEntry{Name: ct.Name, Title: ct.Title, KeyArgs: ct.KeyArgs,
			Opening: ct.Opening, Acceptance: ct.Acceptance, Floor: b.floorOf(ct.CaseType), Exploration: ct.Exploration})
	}
	return out
}

// floorOf is the tier a Case Type's acceptance must reach; 0 when it has no acceptance.
func (b *Board) floorOf(ct CaseType) contract.Tier {
	switch {
	case ct.Acceptance == "":
		return 0
	case ct.Floor.Valid():
		return ct.Floor
	}
	return contract.TierAttested
}

func (b *Board) roots(focus []*contract.Case) contract.Bounded[contract.RootEntry] {
	out := contract.Bounded[contract.RootEntry]{Items: []contract.RootEntry{}}
	for _, c := range focus {
		if len(out.Items) == ViewMaxRoots {
			out.Truncated = true
			break
		}
		r := contract.RootEntry{CaseID: c.CaseID, Root: c.Root, Floor: b.floorOf(b.caseTypes[c.CaseType].CaseType),
			Gaps: contract.Bounded[string]{Items: []string{}}}
		if _, err := b.Certify(c.CaseID); err == nil {
			r.Certified = true
		} else {
			r.Gaps.Items = append(r.Gaps.Items, teachingOf(err))
		}
		if c.Status != contract.CaseRunning {
			r.Gaps.Items = append(r.Gaps.Items, "the Case is "+string(c.Status)+disposition(c))
		}
		out.Items = append(out.Items, r)
	}
	return out
}

func disposition(c *contract.Case) string {
	if c.Disposition == "" {
		return ""
	}
	return " (" + string(c.Disposition) + ")"
}

// viewNodes lists the focused roots, the facts about each focused business key that the
// capability's rules derive (or its opening predicate), then the newest visible nodes.
func (b *Board) viewNodes(focus []*contract.Case) contract.Bounded[contract.Node] {
	// The list is made at its bound at once (or the Board's size): grown by appends, a
	// View of 20 nodes allocated room for 63.
	out := contract.Bounded[contract.Node]{Items: make([]contract.Node, 0, min(ViewMaxNodes, len(b.nodes)))}
	seen := make(map[string]bool, min(ViewMaxNodes, len(b.nodes)))
	add := func(n contract.Node) bool {
		if seen[n.NodeID] {
			return true
		}
		if len(out.Items) == ViewMaxNodes {
			out.Truncated = true
			return false
		}
		seen[n.NodeID] = true
		out.Items = append(out.Items, n)
		return true
	}
	focused := map[contract.CaseID]bool{}
	for _, c := range focus {
		focused[c.CaseID] = true
		if n, ok := b.nodes[c.Root]; ok && !add(b.record(n)) {
			return out
		}
	}
	for _, c := range focus {
		preds := b.heads
		if o := b.caseTypes[c.CaseType].Opening; o != "" && !slices.Contains(preds, o) {
			preds = append(slices.Clip(preds), o)
		}
		for _, pred := range preds {
			pattern, err := keyAtom(pred, c.BusinessKey)
			if err != nil {
				continue
			}
			for e := range b.eng.Match(pattern) {
				if !add(b.entryNode(e)) {
					return out
				}
			}
		}
	}
	for _, id := range slices.Backward(b.recent) {
		n, ok := b.nodes[id]
		if !ok || n.rec.CreatedBy.Kind() == contract.PrincipalCapability || (n.rec.CaseID != "" && !focused[n.rec.CaseID]) {
			continue
		}
		if !add(b.record(n)) {
			return out
		}
	}
	return out
}

// readiness computes each Action's state for the primary focused Case (or for no Case).
func (b *Board) readiness(c *contract.Case, setup Setup) contract.Bounded[contract.ActionEntry] {
	out := contract.Bounded[contract.ActionEntry]{Items: []contract.ActionEntry{}}
	for _, name := range b.actionSeq {
		if len(out.Items) == ViewMaxActions {
			out.Truncated = true
			break
		}
		out.Items = append(out.Items, b.actionEntry(b.actions[name], c, setup))
	}
	return out
}

func (b *Board) actionEntry(a Action, c *contract.Case, setup Setup) contract.ActionEntry {
	e := contract.ActionEntry{Name: a.Name, State: contract.ActionBlocked, Params: []contract.ParamEntry{}, Bound: []string{}}
	given := engine.Bindings{}
	if c != nil {
		e.CaseID = c.CaseID
		for k, v := range c.BusinessKey {
			given[k], _ = engine.ValueOf(v)
		}
	}
	for _, p := range a.Params {
		_, fromKey := given[p.Name]
		if fromKey || slices.ContainsFunc(a.Bindings, func(bd Binding) bool { return bd.Param == p.Name }) {
			e.Bound = append(e.Bound, p.Name)
			continue
		}
		e.Params = append(e.Params, contract.ParamEntry{Name: p.Name, Type: string(p.Type), Optional: p.Optional, Description: p.Description})
	}
	for _, bd := range a.Bindings {
		if !slices.Contains(e.Bound, bd.Param) {
			e.Bound = append(e.Bound, bd.Param)
		}
	}
	slices.Sort(e.Bound)
	switch {
	case c != nil && c.Status == contract.CaseClosed:
		e.Reason, e.Detail = contract.BlockCaseClosed, "Case "+string(c.CaseID)+" is closed"
		return e
	case c != nil && c.Status == contract.CasePaused:
		e.Reason, e.Detail = contract.BlockCasePaused, "Case "+string(c.CaseID)+" is paused by "+holdList(c)
		return e
	case c != nil && b.done(c, a.Name):
		e.Reason, e.Detail = contract.BlockLawLock, a.Name+" already succeeded in this Case and runs once per Case"
		return e
	case setup.Allow.Refusal(a.Name, caseTypeOf(c)) != "":
		e.Reason, e.Detail = contract.BlockNotInProfile, setup.Allow.Refusal(a.Name, caseTypeOf(c))
		return e
	case b.directBlocked(a, c) != "":
		e.Reason, e.Detail = contract.BlockCaseType, b.directBlocked(a, c)
		return e
	case a.Execution != nil && !setup.Tools[a.Execution.Tool]:
		e.Reason, e.Detail = contract.BlockNeedsSetup, "the Tool "+a.Execution.Tool+" is not locked with a bound Source; a member must set it up"
		return e
	}
	if c == nil && hasVars(a.Preconditions) {
		// Without a Case the preconditions range over every subject on the Board; checking
		// them would scan it.
		e.Reason, e.Detail = contract.BlockRule, "its preconditions are checked for a Case's business key; focus a Case to see whether they hold"
		return e
	}
	detail, ok := b.preconditionsHold(a, c, given)
	if !ok {
		e.Reason, e.Detail = contract.BlockRule, detail
		return e
	}
	e.State, e.Detail = contract.ActionReady, detail
	if approvalOf(a) != ApprovalNone {
		e.Waits = append(e.Waits, contract.WaitDecision)
	}
	if a.Execution != nil {
		e.Waits = append(e.Waits, contract.WaitExecution)
	}
	return e
}

// preconditionsHold says whether a's preconditions have a row and every binding one
// trusted value; the string explains a block, or notes that parameters decide.
func (b *Board) preconditionsHold(a Action, c *contract.Case, given engine.Bindings) (string, bool) {
	rows, err := b.eng.Query(substitute(a.Preconditions, given))
	if err != nil {
		return "its preconditions depend on the parameters you pass; they are checked when you apply it", true
	}
	if len(rows) == 0 {
		return "its preconditions do not hold: " + literalsText(a.Preconditions), false
	}
	floor := b.trustFloor(c)
	for _, bd := range a.Bindings {
		vals := trustedValues(rows, bd.Var, floor)
		switch {
		case len(vals) == 0:
			return "no premise at tier " + floor.String() + " or stronger binds " + bd.Param, false
		case len(vals) > 1:
			return "trusted premises give several values for " + bd.Param, false
		}
	}
	return "", true
}

// hasVars reports whether any literal has a variable argument.
func hasVars(lits []engine.Literal) bool {
	for _, l := range lits {
		if !l.Atom.Ground() {
			return true
		}
	}
	return false
}

// caseTypeOf is c's Case Type, "" for no Case.
func caseTypeOf(c *contract.Case) string {
	if c == nil {
		return ""
	}
	return c.CaseType
}

// HasCaseType reports whether the Board declares the Case Type name (the built-in
// exploration Case Type included).
func (b *Board) HasCaseType(name string) bool {
	_, ok := b.caseTypes[name]
	return ok
}

// HasAction reports whether the Board declares the Action name: a capability's, or a
// direct Action of a locked Tool.
func (b *Board) HasAction(name string) bool {
	_, ok := b.actions[name]
	return ok
}
