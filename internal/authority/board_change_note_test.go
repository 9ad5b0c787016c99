package authority_test

import (
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/storecount"
)

// TestAdmission_AfterFindingAnotherInstancesBoardChange: however an instance found
// another instance's Board change (a read of its Board that applied the change from its
// record, a read that built the Board again for it, or an admission whose transaction
// found it), it notes it, and its admissions read the head before their gate for a while
// (docs/architecture.md, "The write sequence", step 2): when the other instance changed
// the Board again since, the next admission runs once, caught up to the head it read. An
// instance that did not note it would decide at the newest head it knew, find the second
// change in its transaction, and run the admission again. An admission whose
// transaction found the change is noted twice: by that check (Write.Fresh) and by the
// catch-up of the attempt it then runs again.
func TestAdmission_AfterFindingAnotherInstancesBoardChange(t *testing.T) {
	cases := []struct {
		name string
		// restore builds the counted instance's Board at its start, its head read on both
		// sides of the nodes, so it follows another instance's changes by their records;
		// built on first use instead, it may hold a change past its head, and the first
		// Board change it reads builds it again (internal/authority/boards/follow.go).
		restore bool
		// find has the counted instance find the other's Board change.
		find   func(t *testing.T, c *authority.Authority, ops *authority.Operations, agent, admin identity.Caller)
		builds int // the builds of the counted instance's Board that find makes
	}{{
		name:    "a read applies it from its record",
		restore: true,
		find: func(t *testing.T, c *authority.Authority, _ *authority.Operations, _, admin identity.Caller) {
			if _, err := c.Cases(t.Context(), admin, "default"); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "a read builds the Board again for it",
		find: func(t *testing.T, c *authority.Authority, _ *authority.Operations, _, admin identity.Caller) {
			if _, err := c.Cases(t.Context(), admin, "default"); err != nil {
				t.Fatal(err)
			}
		},
		builds: 1,
	}, {
		name:    "an admission's transaction finds it",
		restore: true,
		find: func(t *testing.T, _ *authority.Authority, ops *authority.Operations, agent, _ identity.Caller) {
			if ans, err := ops.Call(t.Context(), agent, assertCall("found")); err != nil || state(ans) != contract.OpDone {
				t.Fatalf("the call that finds the change = %v %s %s", err, ans.Result.ErrorCode, ans.Result.Teaching)
			}
		},
		// Its gate changed the Board in memory before the transaction found the other
		// change: that change is taken back, with no build.
	}}
	for _, be := range sharedBackends {
		for _, tc := range cases {
			t.Run(be.name+"/"+tc.name, func(t *testing.T) {
				ctx := t.Context()
				s1, s2 := be.open(t)
				// other is the instance that changes the Board; c, counted, finds it.
				f := newFixtureOn(t, s1)
				other := f.a
				if _, err := other.InstallCapability(ctx, f.admin, "default", authoritytest.ReadPackage(t, "testdata/ops")); err != nil {
					t.Fatalf("InstallCapability: %v", err)
				}
				at, err := other.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
				if err != nil {
					t.Fatalf("CreateAgent: %v", err)
				}
				count := storecount.Wrap(s2)
				c := newAuthorityOn(t, count, f.key)
				if tc.restore {
					if err := c.Restore(ctx); err != nil {
						t.Fatalf("Restore: %v", err)
					}
				}
				ops := authority.NewOperations(c, operation.Config{})
				agent, err := c.Directory().Authenticate(ctx, identity.Token(at.Token))
				if err != nil {
					t.Fatalf("Authenticate: %v", err)
				}
				member := f.admin.Principal()
				change := func(x string) {
					t.Helper()
					err := other.Commit(ctx, "default", member, func(bd *board.Board) (boards.Change, error) {
						res, err := bd.ApplyBatch(board.Author{Principal: member, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{
							{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue(x)}}}}})
						return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, err
					})
					if err != nil {
						t.Fatal(err)
					}
				}

				// c's first call is refused by its Board, which it changes not: a Board
				// built on first use stays as built.
				missing := operation.Call{Tool: contract.ToolApplyBatch, Delivered: func(int64) bool { return true },
					Input: &contract.Batch{Operations: []contract.Operation{{Op: contract.OpRetractNode, NodeID: "missing"}}}}
				if ans, err := ops.Call(ctx, agent, missing); err != nil || state(ans) != contract.OpRefused {
					t.Fatalf("first call = %v %s %s, want refused", err, ans.Result.ErrorCode, ans.Result.Teaching)
				}
				change("b1")
				builds := c.BoardBuilds("default")
				tc.find(t, c, ops, agent, f.admin)
				if n := c.BoardBuilds("default") - builds; n != tc.builds {
					t.Fatalf("finding the change built the Board %d times, want %d", n, tc.builds)
				}
				change("b2")
				count.Reset()
				if ans, err := ops.Call(ctx, agent, assertCall("after")); err != nil || state(ans) != contract.OpDone {
					t.Fatalf("call after the second change = %v %s %s", err, ans.Result.ErrorCode, ans.Result.Teaching)
				}
				cs := count.Counts()
				if lock, read := cs.ByMethod["Tx.LockHead"], cs.ByMethod["Head"]; lock != 1 || read != 1 {
					t.Errorf("after the other instance changed the Board again, the call locked the head %d times and read it %d times outside a transaction, want 1 and 1 (read first, run once): %v", lock, read, cs.ByMethod)
				}
			})
		}
	}
}
