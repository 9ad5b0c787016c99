package authority_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// BenchmarkOperations_QueryBoard is the authority's share of a QueryBoard on a Board of
// 1,000 facts, as a session makes it (its last outcome delivered): on an idle log it
// reads the head once and no events, and the setup from the ledger.
func BenchmarkOperations_QueryBoard(b *testing.B) {
	a, admin := benchBoard(b)
	ctx := b.Context()
	ops := make([]contract.Operation, 0, 1000)
	for i := range 1000 {
		ops = append(ops, contract.Operation{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": contract.StringValue(fmt.Sprint(i))}}})
	}
	for part := range slices.Chunk(ops, 250) {
		err := a.Commit(ctx, "default", admin.Principal(), func(bd *board.Board) (boards.Change, error) {
			res, err := bd.ApplyBatch(board.Author{Principal: admin.Principal(), Tier: contract.TierAttested}, contract.Batch{Operations: part})
			if err != nil {
				return boards.Change{}, err
			}
			return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	at, err := a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		b.Fatal(err)
	}
	agent, err := a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		b.Fatal(err)
	}
	o := authority.NewOperations(a, operation.Config{})
	call := operation.Call{Tool: contract.ToolQueryBoard, Delivered: func(int64) bool { return true },
		Input: &contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "item", Args: contract.Args{"n": contract.StringValue("500")}}}}
	for b.Loop() {
		ans, err := o.Call(ctx, agent, call)
		if err != nil || !ans.Result.Accepted {
			b.Fatalf("QueryBoard = %+v, %v", ans.Result, err)
		}
	}
}
