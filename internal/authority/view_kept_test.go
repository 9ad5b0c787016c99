package authority_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// TestOperations_KeptView shows that the View an Agent's QueryBoard is answered is kept
// between calls only while what it is built from is unchanged: asked again, the answer
// names the same View (one ViewKey); a Board change made by another instance over the
// same store, or another focus, makes a new one, which shows the change.
func TestOperations_KeptView(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	ctx := t.Context()
	query := func(focus ...contract.CaseID) operation.Answer {
		t.Helper()
		ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}, Focus: focus})
		if err != nil {
			t.Fatalf("QueryBoard: %v", err)
		}
		return ans
	}
	first := query()
	if first.ViewKey == 0 {
		t.Fatal("an Agent's QueryBoard names no ViewKey")
	}
	if again := query(); again.ViewKey != first.ViewKey {
		t.Errorf("asked again on an unchanged Board: ViewKey %d, want %d", again.ViewKey, first.ViewKey)
	}
	by := f.admin.Principal()
	if err := other.Commit(ctx, "default", by, func(b *board.Board) (boards.Change, error) {
		res, err := b.ApplyBatch(board.Author{Principal: by, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{
			{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "note", Args: contract.Args{"n": contract.StringValue("1")}}}}})
		if err != nil {
			return boards.Change{}, err
		}
		return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, nil
	}); err != nil {
		t.Fatalf("the other instance's batch: %v", err)
	}
	changed := query()
	if changed.ViewKey == first.ViewKey {
		t.Errorf("after another instance's Board change the answer names the kept View %d", first.ViewKey)
	}
	if n, was := len(changed.Result.View.Nodes.Items), len(first.Result.View.Nodes.Items); n != was+1 {
		t.Errorf("after another instance's Board change the View lists %d nodes, want %d", n, was+1)
	}
	if focused := query("case_none"); focused.ViewKey == changed.ViewKey {
		t.Errorf("another focus is answered the View of the last one, ViewKey %d", changed.ViewKey)
	}
}
