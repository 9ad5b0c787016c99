package board_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// helpdesk is the Tool principal that attests tickets in ticketDecls' Boards.
var helpdesk = board.Author{Principal: "tool:helpdesk", Tier: contract.TierAttested, Words: []string{"ticket"}}

// newTicketBoard returns a ticketDecls Board with ticket id in queue, attested, and its
// Case open.
func newTicketBoard(t *testing.T, id, queue string) (*board.Board, contract.Case) {
	t.Helper()
	b, err := board.New(ticketDecls(t))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, b, helpdesk, assertFact(&contract.Atom{Predicate: "ticket", Args: contract.Args{"id": str(id), "queue": str(queue)}}))
	c, _, err := b.OpenCase(agent.Principal, "ticket", contract.Args{"id": str(id)}, at)
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

func TestBoard_Evaluate_BoardOnly(t *testing.T) {
	t.Parallel()
	b, c := newTicketBoard(t, "T-1", "billing")
	before := snapshot(t, b)
	got, err := b.Evaluate(agent, c.CaseID, "claim", contract.Args{"who": str("ada")})
	if err != nil {
		t.Fatalf("Evaluate(claim): %v", err)
	}
	want := contract.ExecutionRequest{Action: "claim", CaseID: c.CaseID, Approval: board.ApprovalNone,
		Args: contract.Args{"id": str("T-1"), "who": str("ada"), "queue": str("billing")}, Bound: []string{"queue"}}
	if diff := cmp.Diff(want, got, valueEqual); diff != "" {
		t.Errorf("Evaluate(claim) (-want +got):\n%s", diff)
	}
	if after := snapshot(t, b); after != before {
		t.Errorf("Evaluate changed the Board:\nbefore %s\nafter  %s", before, after)
	}
	// Evaluating twice is the same dry run, and the call can still be applied once.
	if again, err := b.Evaluate(agent, c.CaseID, "claim", contract.Args{"who": str("ada")}); err != nil || !cmp.Equal(got, again, valueEqual) {
		t.Errorf("second Evaluate = %+v, %v; want %+v", again, err, got)
	}
	if res, err := b.ApplyAction(agent, c.CaseID, "claim", contract.Args{"who": str("ada")}); err != nil || len(res.Changes) != 2 {
		t.Errorf("ApplyAction after Evaluate = %+v, %v; want the claim applied", res, err)
	}
}

// TestBoard_Evaluate_FollowsPremises: the bound arguments come from the Board as it
// stands, so revising the premise a binding reads changes what the call would run.
func TestBoard_Evaluate_FollowsPremises(t *testing.T) {
	t.Parallel()
	b, c := newTicketBoard(t, "T-1", "billing")
	first, err := b.Evaluate(agent, c.CaseID, "claim", contract.Args{"who": str("ada")})
	if err != nil {
		t.Fatal(err)
	}
	ticket, err := b.Query(contract.Atom{Predicate: "ticket", Args: contract.Args{"id": str("T-1")}}, "", 0)
	if err != nil || len(ticket.Items) != 1 {
		t.Fatalf("ticket facts = %+v, %v; want one", ticket.Items, err)
	}
	apply(t, b, helpdesk, contract.Operation{Op: contract.OpReviseFact, NodeID: ticket.Items[0].NodeID,
		Atom: &contract.Atom{Predicate: "ticket", Args: contract.Args{"id": str("T-1"), "queue": str("refunds")}}})
	second, err := b.Evaluate(agent, c.CaseID, "claim", contract.Args{"who": str("ada")})
	if err != nil {
		t.Fatal(err)
	}
	if got := second.Args["queue"]; got != str("refunds") || first.Args["queue"] != str("billing") {
		t.Errorf("bound queue before and after the revision = %v, %v; want billing, refunds", first.Args["queue"], got)
	}
}

// TestBoard_Evaluate_Executed: for an executed Action, Evaluate returns exactly the
// ExecutionRequest ApplyAction does.
func TestBoard_Evaluate_Executed(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	apply(t, b, workspace, assertFact(calcInput(t, "calc-001")))
	c := openCalc(t, b)
	params := contract.Args{"path": str("out/r.json")}
	before := snapshot(t, b)
	got, err := b.Evaluate(agent, c.CaseID, "write_result", params)
	if err != nil {
		t.Fatalf("Evaluate(write_result): %v", err)
	}
	if after := snapshot(t, b); after != before {
		t.Errorf("Evaluate changed the Board")
	}
	res, err := b.ApplyAction(agent, c.CaseID, "write_result", params)
	if err != nil || res.Request == nil {
		t.Fatalf("ApplyAction(write_result) = %+v, %v; want a request", res, err)
	}
	if diff := cmp.Diff(*res.Request, got, valueEqual); diff != "" {
		t.Errorf("Evaluate differs from ApplyAction's request (-apply +evaluate):\n%s", diff)
	}
	if got.Tool == "" || len(got.Bound) == 0 {
		t.Errorf("Evaluate(write_result) = %+v, want its Tool and bound arguments", got)
	}
}

func TestBoard_Evaluate_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		by     board.Author
		action string
		params contract.Args
		setup  func(t *testing.T, b *board.Board, c contract.Case)
		code   contract.Code
	}{
		{name: "unknown action", by: agent, action: "launch", code: contract.CodeActionUnknown},
		{name: "bound param passed", by: agent, action: "claim", params: contract.Args{"who": str("ada"), "queue": str("vip")}, code: contract.CodeBindingSupplied},
		{name: "missing param", by: agent, action: "claim", code: contract.CodeActionParam},
		{name: "a capability may not write", by: board.Author{Principal: "capability:test.tickets@1"}, action: "claim",
			params: contract.Args{"who": str("ada")}, code: contract.CodeInvalidArgument},
		{name: "ambiguous binding", by: agent, action: "claim", params: contract.Args{"who": str("ada")},
			setup: func(t *testing.T, b *board.Board, _ contract.Case) {
				apply(t, b, helpdesk, assertFact(&contract.Atom{Predicate: "ticket", Args: contract.Args{"id": str("T-1"), "queue": str("vip")}}))
			}, code: contract.CodeBindingAmbiguous},
		{name: "already claimed", by: agent, action: "claim", params: contract.Args{"who": str("ada")},
			setup: func(t *testing.T, b *board.Board, c contract.Case) {
				if _, err := b.ApplyAction(agent, c.CaseID, "claim", contract.Args{"who": str("bob")}); err != nil {
					t.Fatal(err)
				}
			}, code: contract.CodeActionOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c := newTicketBoard(t, "T-1", "billing")
			if tt.setup != nil {
				tt.setup(t, b, c)
			}
			before := snapshot(t, b)
			_, err := b.Evaluate(tt.by, c.CaseID, tt.action, tt.params)
			wantCode(t, err, tt.code)
			if snapshot(t, b) != before {
				t.Errorf("a refused Evaluate changed the Board")
			}
		})
	}
}
