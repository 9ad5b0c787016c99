package board_test

import (
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

func TestBoard_ApplyAction_Refusals(t *testing.T) {
	t.Parallel()
	write := func(args contract.Args) func(*board.Board) error {
		return func(b *board.Board) error { _, err := b.ApplyAction(agent, "case-1", "write_result", args); return err }
	}
	path := str("out/r.json")
	tests := []struct {
		name  string
		setup func(t *testing.T, b *board.Board)
		call  func(*board.Board) error
		code  contract.Code
	}{
		{"unknown action", nil, func(b *board.Board) error { _, err := b.ApplyAction(agent, "case-1", "launch", nil); return err }, contract.CodeActionUnknown},
		{"unknown param", nil, write(contract.Args{"path": path, "colour": str("red")}), contract.CodeActionParam},
		{"param of the wrong type", nil, write(contract.Args{"path": num(t, 7)}), contract.CodeActionParam},
		{"param as a variable", nil, write(contract.Args{"path": contract.VarValue("p")}), contract.CodeActionParam},
		{"missing param", nil, write(contract.Args{}), contract.CodeActionParam},
		{"bound param passed", nil, write(contract.Args{"path": path, "subtotal": num(t, 1)}), contract.CodeBindingSupplied},
		{"another business key", nil, write(contract.Args{"path": path, "job_id": str("calc-002")}), contract.CodeCaseBusinessKey},
		{"unknown Case", nil, func(b *board.Board) error {
			_, err := b.ApplyAction(agent, "case-9", "write_result", contract.Args{"path": path})
			return err
		}, contract.CodeCaseNotFound},
		{"preconditions fail", nil, func(b *board.Board) error {
			_, err := b.ApplyAction(agent, "case-1", "verify_result", nil)
			return err
		}, contract.CodeActionBlocked},
		{"only asserted premises bind", func(t *testing.T, b *board.Board) {
			apply(t, b, agent, assertFact(&contract.Atom{Predicate: "result_written", Args: contract.Args{"job_id": str("calc-001"), "path": path}}))
		}, func(b *board.Board) error {
			_, err := b.ApplyAction(agent, "case-1", "verify_result", nil)
			return err
		}, contract.CodeBindingMissing},
		{"ambiguous binding", func(t *testing.T, b *board.Board) {
			second := calcInput(t, "calc-001")
			second.Args["quantity"] = num(t, 5)
			apply(t, b, workspace, assertFact(second))
		}, write(contract.Args{"path": path}), contract.CodeBindingAmbiguous},
		{"closed Case", func(t *testing.T, b *board.Board) {
			if _, err := b.CloseCase(agent.Principal, "case-1", contract.DispositionCancelled, "stop", at); err != nil {
				t.Fatal(err)
			}
		}, write(contract.Args{"path": path}), contract.CodeCaseClosed},
		{"outcome for an unknown tool", nil, func(b *board.Board) error {
			_, err := b.ApplyOutcome(workspace, contract.ExecutionRequest{Action: "write_result", Tool: "evil.tool@1"}, contract.ExecutionOutcome{OK: true})
			return err
		}, contract.CodeOutcomeMismatch},
		{"outcome row missing a column", nil, func(b *board.Board) error {
			req := contract.ExecutionRequest{Action: "load_input", Tool: "docket.workspace.read_json@1", Args: contract.Args{"path": path}}
			_, err := b.ApplyOutcome(workspace, req, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{{"job_id": str("x")}}})
			return err
		}, contract.CodeOutcomeMismatch},
		{"outcome outside the Source's words", nil, func(b *board.Board) error {
			req := contract.ExecutionRequest{Action: "verify_result", CaseID: "case-1", Tool: "docket.workspace.read_json@1", Args: contract.Args{"job_id": str("calc-001")}}
			narrow := board.Author{Principal: workspace.Principal, Tier: contract.TierAttested, Words: []string{"calculation_input"}}
			_, err := b.ApplyOutcome(narrow, req, contract.ExecutionOutcome{OK: true, Rows: []contract.Args{{"subtotal": num(t, 1), "total": num(t, 2)}}})
			return err
		}, contract.CodeOutcomeMismatch},
		{"outcome by an agent", nil, func(b *board.Board) error {
			_, err := b.ApplyOutcome(agent, contract.ExecutionRequest{Action: "load_input", Tool: "docket.workspace.read_json@1"}, contract.ExecutionOutcome{OK: true})
			return err
		}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCalcBoard(t)
			apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
			openCalc(t, b)
			if tt.setup != nil {
				tt.setup(t, b)
			}
			before := snapshot(t, b)
			wantCode(t, tt.call(b), tt.code)
			if snapshot(t, b) != before {
				t.Errorf("a refused call changed the Board")
			}
		})
	}
}

func TestBoard_ApplyOutcome_Failed(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	before := snapshot(t, b)
	res, err := b.ApplyOutcome(workspace, contract.ExecutionRequest{Action: "load_input", Tool: "docket.workspace.read_json@1"},
		contract.ExecutionOutcome{OK: false, Reason: "file not found"})
	if err != nil || res.Changes != nil || snapshot(t, b) != before {
		t.Errorf("a failed outcome = %+v, %v; want no changes", res, err)
	}
}

// ticketDecls is a small capability with Board-only Actions: claim consumes an open
// ticket and records the claim, once per Case.
func ticketDecls(t testing.TB) board.Declarations {
	t.Helper()
	atom := func(s string) engine.Atom {
		a, err := syntax.ParseAtom("test", s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	lits, err := syntax.ParseLiterals("test", "ticket(id: ?id, queue: ?queue)")
	if err != nil {
		t.Fatal(err)
	}
	return board.Declarations{
		Release: "test.tickets@1", Digest: "sha256:00",
		CaseTypes: []board.CaseType{{Name: "ticket", KeyPredicate: "ticket", KeyArgs: []string{"id"}, Opening: "ticket",
			OpeningFloor: contract.TierAsserted, Acceptance: "resolved", Floor: contract.TierAttested, OncePerCase: []string{"claim"}}},
		Actions: []board.Action{{
			Name: "claim", Params: []board.Param{{Name: "id", Type: board.ParamString}, {Name: "who", Type: board.ParamString}, {Name: "queue", Type: board.ParamString}},
			Preconditions: lits, Bindings: []board.Binding{{Param: "queue", Var: "queue"}},
			Effects: []board.Effect{{Atom: atom("claimed(id: ?id, who: ?who, queue: ?queue)")}, {Atom: atom("~ticket(id: ?id)"), Consume: true}},
		}},
	}
}

func TestBoard_ApplyAction_BoardOnly(t *testing.T) {
	t.Parallel()
	b, err := board.New(ticketDecls(t))
	if err != nil {
		t.Fatal(err)
	}
	helpdesk := board.Author{Principal: "tool:helpdesk", Tier: contract.TierAttested, Words: []string{"ticket"}}
	apply(t, b, helpdesk, assertFact(&contract.Atom{Predicate: "ticket", Args: contract.Args{"id": str("T-1"), "queue": str("billing")}}))
	c, _, err := b.OpenCase(agent.Principal, "ticket", contract.Args{"id": str("T-1")}, at)
	if err != nil {
		t.Fatal(err)
	}
	v := b.View(board.ViewRequest{Principal: agent.Principal, Focus: []contract.CaseID{c.CaseID}})
	want := contract.ActionEntry{Name: "claim", State: contract.ActionReady, CaseID: c.CaseID,
		Params: []contract.ParamEntry{{Name: "who", Type: "string"}}, Bound: []string{"id", "queue"}}
	if diff := cmp.Diff(want, actionEntry(t, v, "claim")); diff != "" {
		t.Errorf("View claim (-want +got):\n%s", diff)
	}
	res, err := b.ApplyAction(agent, c.CaseID, "claim", contract.Args{"who": str("ada")})
	if err != nil || res.Request != nil {
		t.Fatalf("ApplyAction(claim) = %+v, %v; want effects applied", res, err)
	}
	if len(res.Changes) != 2 || res.Changes[0].Put == nil || res.Changes[0].Put.Tier != contract.TierAsserted || res.Changes[1].Delete == "" {
		t.Errorf("claim changes = %+v, want the claim put (asserted, an agent's) and the ticket deleted", res.Changes)
	}
	if res.Case == nil || res.Case.Terminal[0] != "claim" {
		t.Errorf("claim Case = %+v, want claim recorded as terminal", res.Case)
	}
	claimed, _ := b.Query(contract.Atom{Predicate: "claimed", Args: contract.Args{"queue": str("billing"), "who": str("ada")}}, "", 0)
	if len(claimed.Items) != 1 {
		t.Errorf("claimed = %+v, want one fact with the bound queue", claimed.Items)
	}
	v = b.View(board.ViewRequest{Principal: agent.Principal, Focus: []contract.CaseID{c.CaseID}})
	if e := actionEntry(t, v, "claim"); e.Reason != contract.BlockLawLock {
		t.Errorf("View claim after success = %+v, want blocked law_lock", e)
	}
}
