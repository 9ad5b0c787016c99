package authority_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// itemPattern is a QueryBoard of every item fact.
var itemPattern = &contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "item", Args: contract.Args{"n": contract.StringValue("?n")}}}

// queryItems answers the agent's QueryBoard of itemPattern on ops, failing the test when
// no answer comes within a few seconds (the call waits for a lock a paused write holds),
// and returns the items it matched, in order.
func queryItems(t *testing.T, ops *authority.Operations, agent identity.Caller) []string {
	t.Helper()
	ans := within(t, "QueryBoard of item(?n)", func(ctx context.Context) (operation.Answer, error) {
		return ops.Call(ctx, agent, operation.Call{Tool: contract.ToolQueryBoard, Input: itemPattern})
	})
	var got struct {
		Matches contract.Bounded[contract.Node] `json:"matches"`
	}
	if !ans.Result.Accepted || json.Unmarshal(ans.Result.Result, &got) != nil {
		t.Fatalf("QueryBoard of item(?n) = %s %s, want its matches", ans.Result.ErrorCode, ans.Result.Result)
	}
	var items []string
	for _, n := range got.Matches.Items {
		items = append(items, n.Atom.Args["n"].Str())
	}
	slices.Sort(items)
	return items
}

// TestOperations_PatternQueryDuringBoardWrite shows that an Agent's QueryBoard of a
// pattern it read before on the same Board does not wait for a write that holds the
// project's Board lock across its store transaction: it is answered meanwhile with the
// matches kept under the Board's version, without the change still in flight, and once
// the write commits the next QueryBoard matches it (docs/architecture.md, "The project
// state and its driver").
func TestOperations_PatternQueryDuringBoardWrite(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, _ := be.open(t)
			ps := &pauseStore{Store: s1}
			f := opsFixtureOver(t, ps, time.Millisecond)
			ctx := t.Context()
			if err := commitItem(ctx, f.a, f.admin, "1"); err != nil {
				t.Fatal(err)
			}
			queryItems(t, f.ops, f.agent) // matched under the lock, and kept; the View published

			release, done := startPaused(t, ps, func() error { return commitItem(ctx, f.a, f.admin, "2") })
			during := queryItems(t, f.ops, f.agent)
			release()
			if err := <-done; err != nil {
				t.Fatalf("the Board write: %v", err)
			}
			if !slices.Equal(during, []string{"1"}) {
				t.Errorf("QueryBoard of item(?n) during the write's transaction matches %v, want [1]", during)
			}
			if after := queryItems(t, f.ops, f.agent); !slices.Equal(after, []string{"1", "2"}) {
				t.Errorf("QueryBoard of item(?n) after the write committed matches %v, want [1 2]", after)
			}
		})
	}
}

// TestOperations_PatternQueryNotStale shows that matches kept under a Board's version
// never answer a read of another Board: after a Board change of this instance, and of
// another instance over the same store, the next QueryBoard of the same pattern matches
// the change, on both backends.
func TestOperations_PatternQueryNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			f, other := twoInstances(t, be.open)
			ctx := t.Context()
			var want []string
			for round := range 4 {
				n := fmt.Sprint(round)
				queryItems(t, f.ops, f.agent)
				queryItems(t, f.ops, f.agent) // read again, now with the matches kept
				by := f.a
				if round%2 == 1 {
					by = other
				}
				if err := commitItem(ctx, by, f.admin, n); err != nil {
					t.Fatalf("round %d: the Board write: %v", round, err)
				}
				want = append(want, n)
				if got := queryItems(t, f.ops, f.agent); !slices.Equal(got, want) {
					t.Errorf("round %d: QueryBoard of item(?n) after a Board change matches %v, want %v", round, got, want)
				}
			}
		})
	}
}

// TestOperations_PatternQueryFailedCommit shows that matches kept under a Board's
// version never hold a Board change whose COMMIT failed: not while its transaction is
// open, not after its COMMIT failed, on both backends; the same change committed is
// matched.
func TestOperations_PatternQueryFailedCommit(t *testing.T) {
	for _, be := range scenarioBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, _, exec := be.open(t)
			for _, q := range be.failAtCommit {
				exec(q)
			}
			ps := &pauseStore{Store: s1}
			f := opsFixtureOver(t, ps, time.Millisecond)
			ctx := t.Context()
			if err := commitItem(ctx, f.a, f.admin, "1"); err != nil {
				t.Fatal(err)
			}
			queryItems(t, f.ops, f.agent)

			exec(fmt.Sprintf(`INSERT INTO fail_at_commit (type) VALUES ('%s')`, event.BatchApplied))
			release, done := startPaused(t, ps, func() error { return commitItem(ctx, f.a, f.admin, "lost") })
			during := queryItems(t, f.ops, f.agent)
			release()
			if err := <-done; err == nil {
				t.Fatal("the Board write whose COMMIT fails returned nil")
			}
			if !slices.Equal(during, []string{"1"}) {
				t.Errorf("QueryBoard of item(?n) during the transaction matches %v, want [1]", during)
			}
			for range 2 {
				if got := queryItems(t, f.ops, f.agent); !slices.Equal(got, []string{"1"}) {
					t.Errorf("QueryBoard of item(?n) after the failed COMMIT matches %v, want [1]", got)
				}
			}

			exec(`DELETE FROM fail_at_commit`)
			if err := commitItem(ctx, f.a, f.admin, "kept"); err != nil {
				t.Fatal(err)
			}
			if got := queryItems(t, f.ops, f.agent); !slices.Equal(got, []string{"1", "kept"}) {
				t.Errorf("QueryBoard of item(?n) after the healed commit matches %v, want [1 kept]", got)
			}
		})
	}
}
