package board_test

import (
	"cmp"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

func TestBoard_OpenCase_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		caseType string
		key      contract.Args
		code     contract.Code
		by       contract.Principal // agent when empty
	}{
		{"opened by a tool", calcType, contract.Args{"job_id": str("calc-002")}, contract.CodeInvalidArgument, workspace.Principal},
		{"unknown type", "no_such_type", calcKey, contract.CodeCaseTypeUnknown, ""},
		{"missing key", calcType, contract.Args{}, contract.CodeCaseBusinessKey, ""},
		{"extra key", calcType, contract.Args{"job_id": str("calc-001"), "path": str("x")}, contract.CodeCaseBusinessKey, ""},
		{"variable key", calcType, contract.Args{"job_id": contract.VarValue("j")}, contract.CodeCaseBusinessKey, ""},
		{"opening missing", calcType, contract.Args{"job_id": str("calc-404")}, contract.CodeCaseOpeningMissing, ""},
		{"opening only asserted", calcType, contract.Args{"job_id": str("calc-asserted")}, contract.CodeCaseOpeningNotTrusted, ""},
		{"key of the wrong type", calcType, contract.Args{"job_id": num(t, 1)}, contract.CodeCaseOpeningMissing, ""},
		{"already open", calcType, calcKey, contract.CodeCaseExists, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCalcBoard(t)
			apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
			apply(t, b, agent, assertFact(calcInput(t, "calc-asserted")))
			openCalc(t, b)
			before := snapshot(t, b)
			by := cmp.Or(tt.by, agent.Principal)
			_, changes, err := b.OpenCase(by, tt.caseType, tt.key, at)
			wantCode(t, err, tt.code)
			if changes != nil || snapshot(t, b) != before {
				t.Errorf("a refused OpenCase changed the Board")
			}
		})
	}
}

func TestBoard_OpenCase_DeterministicAndReopen(t *testing.T) {
	t.Parallel()
	var ids []contract.Case
	for range 2 {
		b := newCalcBoard(t)
		apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
		c := openCalc(t, b)
		if _, err := b.CloseCase(agent.Principal, c.CaseID, contract.DispositionAbandoned, "the customer withdrew", at); err != nil {
			t.Fatal(err)
		}
		again := openCalc(t, b) // a closed Case frees its key
		ids = append(ids, c, again)
	}
	if ids[0].CaseID != "case-1" || ids[1].CaseID != "case-2" || ids[0].KeyDigest != ids[2].KeyDigest ||
		ids[1].CaseID != ids[3].CaseID || ids[0].ContractDigest == "" {
		t.Errorf("Cases = %+v, want case-1 then case-2 on both Boards with the same pins", ids)
	}
}

func TestBoard_CloseCase_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		caseID      contract.CaseID
		disposition contract.Disposition
		reason      string
		code        contract.Code
	}{
		{"unknown Case", "case-99", contract.DispositionCancelled, "x", contract.CodeCaseNotFound},
		{"completed without acceptance", "case-1", contract.DispositionCompleted, "", contract.CodeCaseNotCertified},
		{"cancelled without reason", "case-1", contract.DispositionCancelled, "  ", contract.CodeCaseReasonRequired},
		{"failed without reason", "case-1", contract.DispositionFailed, "", contract.CodeCaseReasonRequired},
		{"unknown disposition", "case-1", "done", "x", contract.CodeInvalidArgument},
		{"already closed", "case-2", contract.DispositionCancelled, "again", contract.CodeCaseClosed},
		{"exploration cannot complete", "case-3", contract.DispositionCompleted, "", contract.CodeCaseNotCertified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCalcBoard(t)
			apply(t, b, workspace, assertFact(calcInput(t, "calc-001")), assertFact(calcInput(t, "calc-002")))
			openCalc(t, b)
			c2, _, err := b.OpenCase(agent.Principal, calcType, contract.Args{"job_id": str("calc-002")}, at)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.CloseCase(agent.Principal, c2.CaseID, contract.DispositionSuperseded, "replaced by a corrected job", at); err != nil {
				t.Fatal(err)
			}
			if _, _, err := b.OpenCase(agent.Principal, board.ExplorationCaseType, contract.Args{"topic": str("t")}, at); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, b)
			_, err = b.CloseCase(agent.Principal, tt.caseID, tt.disposition, tt.reason, at)
			wantCode(t, err, tt.code)
			if snapshot(t, b) != before {
				t.Errorf("a refused CloseCase changed the Board")
			}
		})
	}
}

// TestBoard_Holds checks that a hold pauses a Case (its writes, Actions and close are
// refused case_paused naming the holds, and the View says so), that each hold is released
// only by its own kind of owner, and that the Case runs again when none is left.
func TestBoard_Holds(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
	c := openCalc(t, b)
	member := contract.Principal("member:mem_1")
	p, mh, err := b.HoldCase(c.CaseID, contract.CaseHold{Owner: contract.HoldMember, By: member, Reason: "checking the totals by hand", At: at})
	if err != nil || p.Status != contract.CasePaused || mh.ID != "hold-1" || len(p.Holds) != 1 {
		t.Fatalf("HoldCase = %+v, %+v, %v", p, mh, err)
	}
	p, ph, err := b.HoldCase(c.CaseID, contract.CaseHold{Owner: contract.HoldPolicy, Policy: "recovery", Subject: "agt_1.4", By: "authority", Reason: "operation agt_1.4's outcome is unknown", At: at})
	if err != nil || ph.ID != "hold-2" || len(p.Holds) != 2 {
		t.Fatalf("second HoldCase = %+v, %+v, %v", p, ph, err)
	}

	_, _, err = b.HoldCase(c.CaseID, contract.CaseHold{Owner: contract.HoldPolicy, Policy: "recovery", Subject: "agt_1.4", By: "authority", Reason: "again", At: at})
	wantCode(t, err, contract.CodeAlreadyExists)

	_, err = b.ApplyAction(agent, c.CaseID, "write_result", contract.Args{"path": str("out/r.json")})
	wantCode(t, err, contract.CodeCasePaused)
	for _, want := range []string{"hold-1", "hold-2", "checking the totals by hand", "recovery policy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the case_paused refusal %q does not name %q", err, want)
		}
	}
	local := assertFact(calcInput(t, "calc-002"))
	local.CaseID = c.CaseID
	_, err = b.ApplyBatch(board.Author{Principal: agent.Principal}, contract.Batch{Operations: []contract.Operation{local}})
	wantCode(t, err, contract.CodeCasePaused)
	_, err = b.CloseCase(agent.Principal, c.CaseID, contract.DispositionCancelled, "stop", at)
	wantCode(t, err, contract.CodeCasePaused)
	v := b.View(board.ViewRequest{Principal: agent.Principal, Focus: []contract.CaseID{c.CaseID}})
	if e := actionEntry(t, v, "write_result"); e.Reason != contract.BlockCasePaused || !strings.Contains(e.Detail, "hold-2") {
		t.Errorf("View write_result = %+v, want blocked case_paused naming the holds", e)
	}
	if v.Position.Writes == contract.PositionOpen {
		t.Errorf("position.writes = open on a paused focused Case")
	}

	tests := []struct {
		name   string
		hold   string
		owner  contract.HoldOwner
		policy string
		code   contract.Code
	}{
		{"a member on the policy's hold", "hold-2", contract.HoldMember, "", contract.CodeHoldNotOwner},
		{"another policy on the policy's hold", "hold-2", contract.HoldPolicy, "autonomy", contract.CodeHoldNotOwner},
		{"a policy on the member's hold", "hold-1", contract.HoldPolicy, "recovery", contract.CodeHoldNotOwner},
		{"a hold that is not there", "hold-9", contract.HoldMember, "", contract.CodeHoldNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, b)
			_, _, err := b.ReleaseHold(c.CaseID, tt.hold, tt.owner, tt.policy)
			wantCode(t, err, tt.code)
			if snapshot(t, b) != before {
				t.Errorf("a refused release changed the Board")
			}
		})
	}

	if r, _, err := b.ReleaseHold(c.CaseID, "hold-1", contract.HoldMember, ""); err != nil || r.Status != contract.CasePaused || len(r.Holds) != 1 {
		t.Fatalf("member release = %+v, %v; want still paused by the policy's hold", r, err)
	}
	if r, _, err := b.ReleaseHold(c.CaseID, "hold-2", contract.HoldPolicy, "recovery"); err != nil || r.Status != contract.CaseRunning || r.Holds != nil {
		t.Fatalf("policy release = %+v, %v; want running", r, err)
	}
	if _, err := b.ApplyAction(agent, c.CaseID, "write_result", contract.Args{"path": str("out/r.json")}); err != nil {
		t.Errorf("write_result after the last release: %v", err)
	}
	if _, h, err := b.HoldCase(c.CaseID, contract.CaseHold{Owner: contract.HoldMember, By: member, Reason: "again", At: at}); err != nil || h.ID != "hold-3" {
		t.Errorf("a hold after releases = %+v, %v; want hold-3 (ids are never reused)", h, err)
	}
}

func TestBoard_HoldRefusals(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
	c := openCalc(t, b)
	tests := []struct {
		name string
		id   contract.CaseID
		hold contract.CaseHold
		code contract.Code
	}{
		{"no such Case", "case-9", contract.CaseHold{Owner: contract.HoldMember, Reason: "why"}, contract.CodeCaseNotFound},
		{"no reason", c.CaseID, contract.CaseHold{Owner: contract.HoldMember, Reason: "  "}, contract.CodeInvalidArgument},
		{"a reason too long", c.CaseID, contract.CaseHold{Owner: contract.HoldMember, Reason: strings.Repeat("x", board.MaxHoldReason+1)}, contract.CodeInvalidArgument},
		{"an unknown owner", c.CaseID, contract.CaseHold{Owner: "robot", Reason: "why"}, contract.CodeInvalidArgument},
		{"a policy's hold without its policy", c.CaseID, contract.CaseHold{Owner: contract.HoldPolicy, Subject: "agt_1.1", Reason: "why"}, contract.CodeInvalidArgument},
		{"a policy's hold without its subject", c.CaseID, contract.CaseHold{Owner: contract.HoldPolicy, Policy: "recovery", Reason: "why"}, contract.CodeInvalidArgument},
		{"a member's hold naming a policy", c.CaseID, contract.CaseHold{Owner: contract.HoldMember, Policy: "recovery", Reason: "why"}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, b)
			tt.hold.By, tt.hold.At = "member:mem_1", at
			_, _, err := b.HoldCase(tt.id, tt.hold)
			wantCode(t, err, tt.code)
			if snapshot(t, b) != before {
				t.Errorf("a refused hold changed the Board")
			}
		})
	}
}

// TestBoard_Exploration checks that Case-local facts, rules and goals live only in an
// exploration Case, are seen only by callers focusing it, and vanish when it closes.
func TestBoard_Exploration(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
	e, _, err := b.OpenCase(agent.Principal, board.ExplorationCaseType, contract.Args{"topic": str("bulk orders")}, at)
	if err != nil {
		t.Fatal(err)
	}
	if v := b.View(board.ViewRequest{Principal: agent.Principal, Focus: []contract.CaseID{e.CaseID}}); v.Position.Rules != contract.PositionOpen {
		t.Errorf("position.rules in a focused exploration Case = %q, want open", v.Position.Rules)
	}
	if v := b.View(board.ViewRequest{Principal: agent.Principal}); v.Position.Rules == contract.PositionOpen {
		t.Errorf("position.rules without an exploration Case = open, want a reason")
	}
	res := apply(t, b, agent,
		contract.Operation{Op: contract.OpAddAxiom, CaseID: e.CaseID, Rule: &contract.Rule{
			Head: contract.Atom{Predicate: "bulk", Args: contract.Args{"job_id": contract.VarValue("j")}},
			Body: []contract.Literal{{Predicate: "calculation_input", Args: contract.Args{"job_id": contract.VarValue("j"), "quantity": contract.VarValue("q")}},
				{Predicate: "gte", Args: contract.Args{"left": contract.VarValue("q"), "right": num(t, 2)}}}}},
		contract.Operation{Op: contract.OpAssertFact, CaseID: e.CaseID, Atom: &contract.Atom{Predicate: "hunch", Args: contract.Args{"text": str("bulk is common")}}},
		contract.Operation{Op: contract.OpDeclareGoal, CaseID: e.CaseID, Atom: &contract.Atom{Predicate: "bulk", Args: contract.Args{"job_id": contract.VarValue("j")}}},
	)
	bulk, err := b.Query(contract.Atom{Predicate: "bulk", Args: contract.Args{}}, "", 0)
	if err != nil || len(bulk.Items) != 1 || bulk.Items[0].Tier != contract.TierAsserted {
		t.Fatalf("Query(bulk) = %+v, %v; want one fact, asserted (an agent's rule derives no stronger)", bulk, err)
	}
	visible := func(focus ...contract.CaseID) bool {
		for _, n := range b.View(board.ViewRequest{Principal: agent.Principal, Focus: focus}).Nodes.Items {
			if n.NodeID == res.NodeIDs[1] {
				return true
			}
		}
		return false
	}
	if !visible(e.CaseID) || visible() {
		t.Errorf("the Case-local fact is visible focused=%v unfocused=%v, want only when focused", visible(e.CaseID), visible())
	}
	closed, err := b.CloseCase(agent.Principal, e.CaseID, contract.DispositionAbandoned, "explored enough", at)
	if err != nil {
		t.Fatal(err)
	}
	if !closed.Receipt.Exploratory || closed.Receipt.Certified || len(closed.Changes) != 3 {
		t.Errorf("exploration close = %+v, want an exploratory receipt and 3 deletions", closed)
	}
	for _, id := range res.NodeIDs {
		if _, ok := b.Node(id); ok {
			t.Errorf("Case-local node %s survived the close", id)
		}
	}
	if bulk, _ := b.Query(contract.Atom{Predicate: "bulk", Args: contract.Args{}}, "", 0); len(bulk.Items) != 0 {
		t.Errorf("bulk still derived after the exploration closed: %+v", bulk.Items)
	}
	_, err = b.ApplyBatch(agent, contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact, CaseID: e.CaseID, Atom: &contract.Atom{Predicate: "hunch", Args: contract.Args{}}}}})
	wantCode(t, err, contract.CodeCaseClosed)
}

func TestBoard_AllowAgentRules(t *testing.T) {
	t.Parallel()
	b, err := board.NewConfig(board.Config{Declarations: []board.Declarations{calcDecls(t)}, AllowAgentRules: true})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, b, agent, contract.Operation{Op: contract.OpAddAxiom, Rule: &contract.Rule{
		Head: contract.Atom{Predicate: "calculation_verified", Args: contract.Args{"job_id": contract.VarValue("j")}},
		Body: []contract.Literal{{Predicate: "calculation_input", Args: contract.Args{"job_id": contract.VarValue("j")}}}}})
	apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
	c := openCalc(t, b)
	// The agent's rule derives the acceptance, but only at asserted: it cannot wash green.
	_, err = b.CloseCase(agent.Principal, c.CaseID, contract.DispositionCompleted, "", at)
	wantCode(t, err, contract.CodeCaseAcceptanceFloor)
	if v := b.View(board.ViewRequest{Principal: agent.Principal}); v.Position.Rules != contract.PositionOpen {
		t.Errorf("position.rules = %q with AllowAgentRules, want open", v.Position.Rules)
	}
}
