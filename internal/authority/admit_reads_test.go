package authority_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/storecount"
)

// assertCall is an ApplyBatch of calc that asserts one fact: done, the Board changed.
func assertCall(x string) operation.Call {
	return operation.Call{Tool: contract.ToolApplyBatch, Delivered: func(int64) bool { return true },
		Input: &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue(x)}}}}}}
}

// holdsSeen reports whether a's Board of the default project holds the fact seen(x):
// the Board itself, not a View published of it, which a refused change could leave
// unbuilt while the Board beneath it keeps the change.
func holdsSeen(t *testing.T, a *authority.Authority, x string) bool {
	t.Helper()
	var holds bool
	if err := a.View(t.Context(), "default", func(b *board.Board) error {
		holds = slices.ContainsFunc(b.Nodes(), func(n contract.Node) bool {
			return n.Atom != nil && n.Atom.Predicate == "seen" && n.Atom.Args["x"] == contract.StringValue(x)
		})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return holds
}

// TestAdmission_DecidedOnWhatAnotherInstanceWrote: an admission's gate reads the Board,
// the Agent's Operations and the policies in force at the newest head its instance
// knows, without reading the head (docs/architecture.md, "Catch-ups from memory"), so
// what another instance committed since is checked inside the admission's transaction,
// under the head lock, or, for a refusal, at a head read then: each call here is decided
// on what instance B wrote just before it, which instance A never read before the call.
func TestAdmission_DecidedOnWhatAnotherInstanceWrote(t *testing.T) {
	attended := func(perDay int) string {
		return strings.Replace(attendedPolicy, "max_operations_per_day  = 2", "max_operations_per_day  = "+string(rune('0'+perDay)), 1)
	}
	cases := []struct {
		name string
		// setup runs on instance A before its first call; b, on instance B after it.
		setup, b func(t *testing.T, p opsPair)
		call     operation.Call
		want     contract.OperationState // "" when the gate refuses
		wantCode contract.Code
	}{{
		// send binds its address from the target fact: without it, it is refused by the
		// Board; with it, it waits for a person. Neither changes the Board.
		name: "a Board change",
		b: func(t *testing.T, p opsPair) {
			member := p.admin.Principal()
			err := p.a[1].Commit(t.Context(), "default", member, func(bd *board.Board) (boards.Change, error) {
				res, err := bd.ApplyBatch(board.Author{Principal: member, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{
					{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "target", Args: contract.Args{"addr": contract.StringValue("a@x")}}}}})
				return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, err
			})
			if err != nil {
				t.Fatal(err)
			}
		},
		call: operation.Call{Tool: contract.ToolApplyAction, Delivered: func(int64) bool { return true },
			Input: &contract.ApplyActionInput{Action: "send"}},
		want: contract.OpWaitingForDecision,
	}, {
		name: "an Agent's level set",
		b: func(t *testing.T, p opsPair) {
			if _, err := p.a[1].SetAgentLevel(t.Context(), p.admin, "default", "calc", contract.SetLevelRequest{Level: "manual"}); err != nil {
				t.Fatal(err)
			}
		},
		call: assertCall("after"),
		want: contract.OpWaitingForDecision,
	}, {
		name: "a policy published",
		setup: func(t *testing.T, p opsPair) {
			ctx := t.Context()
			if _, err := p.a[0].PublishPolicy(ctx, p.admin, "default", contract.PublishPolicyRequest{File: "a.toml", Text: attended(3)}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.a[0].SetAgentLevel(ctx, p.admin, "default", "calc", contract.SetLevelRequest{Level: "attended"}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.a[0].OpenRunWindow(ctx, p.admin, "default", "calc", contract.OpenWindowRequest{Minutes: 600}); err != nil {
				t.Fatal(err)
			}
		},
		b: func(t *testing.T, p opsPair) {
			if _, err := p.a[1].PublishPolicy(t.Context(), p.admin, "default", contract.PublishPolicyRequest{File: "a.toml", Text: attended(1)}); err != nil {
				t.Fatal(err)
			}
		},
		call:     assertCall("after"),
		wantCode: contract.CodeDailyBound,
	}, {
		// A's first call is refused outside_run_window, and so would this one be on what A
		// knew: the refusal reads the head, and the gate runs again.
		name: "a run window opened",
		setup: func(t *testing.T, p opsPair) {
			ctx := t.Context()
			if _, err := p.a[0].PublishPolicy(ctx, p.admin, "default", contract.PublishPolicyRequest{File: "a.toml", Text: attended(5)}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.a[0].SetAgentLevel(ctx, p.admin, "default", "calc", contract.SetLevelRequest{Level: "attended"}); err != nil {
				t.Fatal(err)
			}
		},
		b: func(t *testing.T, p opsPair) {
			if _, err := p.a[1].OpenRunWindow(t.Context(), p.admin, "default", "calc", contract.OpenWindowRequest{Minutes: 600}); err != nil {
				t.Fatal(err)
			}
		},
		call: assertCall("after"),
		want: contract.OpDone,
	}}
	for _, be := range sharedBackends {
		for _, tc := range cases {
			t.Run(be.name+"/"+tc.name, func(t *testing.T) {
				p := newOpsPair(t, be.open)
				if tc.setup != nil {
					tc.setup(t, p)
				}
				// A's first call builds what A knows: its Board, ledger and policies, at
				// the head it leaves.
				if _, err := p.ops[0].Call(t.Context(), p.agent, assertCall("before")); err != nil {
					t.Fatalf("first call: %v", err)
				}
				tc.b(t, p)
				ans, err := p.ops[0].Call(t.Context(), p.agent, tc.call)
				if err != nil {
					t.Fatal(err)
				}
				if tc.wantCode != "" {
					if ans.Result.ErrorCode != tc.wantCode {
						t.Errorf("call after B's write = %s %s %+v, want %s", ans.Result.ErrorCode, ans.Result.Teaching, ans.Result.Operations, tc.wantCode)
					}
					// The gate's first run changed A's Board in memory before the
					// transaction found B's write; the refusal must leave no trace of it.
					for i := range p.a {
						if holdsSeen(t, p.a[i], "after") {
							t.Errorf("instance %c's Board holds the refused call's fact", 'A'+i)
						}
					}
					return
				}
				if got := state(ans); got != tc.want {
					t.Errorf("call after B's write = %s (%s %s), want %s", got, ans.Result.ErrorCode, ans.Result.Teaching, tc.want)
				}
			})
		}
	}
}

// TestAdmission_StoreCalls: a governed admission reads the log's head once, inside its
// transaction, where it locks it (docs/architecture.md, "One commit function"): its gate
// reads at the newest head its instance knows. Another Agent's Operation committed by
// another instance before it is read once, by the ledger's catch-up in that
// transaction, and does not make the gate run again. It read the head once more before
// its gate, outside the transaction.
func TestAdmission_StoreCalls(t *testing.T) {
	cases := []struct {
		name string
		// between runs on instance B before the counted call, another Agent's refused
		// write; nil in one instance.
		between bool
		want    map[string]int64 // store calls of the counted call, by method
	}{
		{"one instance", false, map[string]int64{"Head": 0, "Tx.LockHead": 1, "Update": 1, "Tx.Events": 0}},
		{"another instance wrote", true, map[string]int64{"Head": 0, "Tx.LockHead": 1, "Update": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			var count *storecount.Store
			p := newOpsPair(t, func(t *testing.T) (store.Store, store.Store) {
				path := filepath.Join(t.TempDir(), "docket.db")
				count = storecount.Wrap(openSQLite(t, path))
				return count, openSQLite(t, path)
			})
			at, err := p.a[0].Directory().CreateAgent(ctx, p.admin, "default", contract.CreateAgentRequest{Name: "other"})
			if err != nil {
				t.Fatal(err)
			}
			other, err := p.a[1].Directory().Authenticate(ctx, identity.Token(at.Token))
			if err != nil {
				t.Fatal(err)
			}
			if ans, err := p.ops[0].Call(ctx, p.agent, assertCall("before")); err != nil || state(ans) != contract.OpDone {
				t.Fatalf("first call = %v %s %s", err, ans.Result.ErrorCode, ans.Result.Teaching)
			}
			if tc.between {
				missing := operation.Call{Tool: contract.ToolApplyBatch, Delivered: func(int64) bool { return true },
					Input: &contract.Batch{Operations: []contract.Operation{{Op: contract.OpRetractNode, NodeID: "missing"}}}}
				if ans, err := p.ops[1].Call(ctx, other, missing); err != nil || state(ans) != contract.OpRefused {
					t.Fatalf("other's call on B = %v %s %s", err, ans.Result.ErrorCode, ans.Result.Teaching)
				}
			}
			count.Reset()
			h, ans, err := p.ops[0].Operations().Begin(ctx, p.agent, assertCall("after"))
			if err != nil || h == nil {
				t.Fatalf("Begin = %v %s %s, want admitted", err, ans.Result.ErrorCode, ans.Result.Teaching)
			}
			c := count.Counts()
			for m, n := range tc.want {
				if c.ByMethod[m] != n {
					t.Errorf("the admission made %d %s calls, want %d: %v %v", c.ByMethod[m], m, n, c.ByMethod, c.HeadsFrom)
				}
			}
			if err := h.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAdmission_AnotherInstanceChangingTheBoard: an admission whose transaction finds
// another instance's Board change runs again (its gate's change in memory taken back),
// caught up to a head read; while that
// instance goes on changing the Board, the next admissions read the head before their
// gate rather than run twice, and once a read finds the Board unchanged they read it
// only in their transaction again (docs/architecture.md, "The write sequence").
func TestAdmission_AnotherInstanceChangingTheBoard(t *testing.T) {
	ctx := t.Context()
	var count *storecount.Store
	p := newOpsPair(t, func(t *testing.T) (store.Store, store.Store) {
		path := filepath.Join(t.TempDir(), "docket.db")
		count = storecount.Wrap(openSQLite(t, path))
		return count, openSQLite(t, path)
	})
	member := p.admin.Principal()
	change := func(x string) {
		t.Helper()
		err := p.a[1].Commit(ctx, "default", member, func(bd *board.Board) (boards.Change, error) {
			res, err := bd.ApplyBatch(board.Author{Principal: member, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{
				{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue(x)}}}}})
			return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if ans, err := p.ops[0].Call(ctx, p.agent, assertCall("first")); err != nil || state(ans) != contract.OpDone {
		t.Fatalf("first call = %v %s %s", err, ans.Result.ErrorCode, ans.Result.Teaching)
	}
	calls := 0
	call := func(what string) (lock, read int64) {
		t.Helper()
		calls++
		count.Reset()
		ans, err := p.ops[0].Call(ctx, p.agent, assertCall(fmt.Sprint("a", calls)))
		if err != nil || state(ans) != contract.OpDone {
			t.Fatalf("%s: call = %v %s %s", what, err, ans.Result.ErrorCode, ans.Result.Teaching)
		}
		c := count.Counts()
		return c.ByMethod["Tx.LockHead"], c.ByMethod["Head"]
	}
	// B changes the Board: A's transaction finds it and runs the call again, caught up to
	// a head read (B's change applied from its record, with no rebuild and no read more:
	// what A's gate had changed in memory was taken back).
	change("b1")
	if lock, read := call("B changed the Board"); lock != 2 || read != 1 {
		t.Errorf("after B changed the Board, the call locked the head %d times and read it %d times outside a transaction, want 2 and 1", lock, read)
	}
	// The call that ran again is in the log, not only in A's memory: B, which reads the
	// log, holds its fact.
	if !holdsSeen(t, p.a[1], "a1") {
		t.Errorf("instance B's Board lacks the fact of A's call that ran again: A's memory kept its first run's change, which the log lacks")
	}
	// B changes it again: A reads the head first, and runs once.
	change("b2")
	if lock, read := call("B changed it again"); lock != 1 || read != 1 {
		t.Errorf("after B changed the Board again, the call locked the head %d times and read it %d times outside a transaction, want 1 and 1", lock, read)
	}
	if n := p.a[0].BoardBuilds("default"); n != 1 {
		t.Errorf("A built its Board %d times, want once: B's changes are applied from their records", n)
	}
	// B is quiet: A reads the head first for a while, then only in its transaction.
	for n := 1; ; n++ {
		lock, read := call("B is quiet")
		if lock != 1 || read > 1 {
			t.Fatalf("quiet call %d locked the head %d times and read it %d times outside a transaction, want 1 and at most 1", n, lock, read)
		}
		if read == 0 {
			break
		}
		if n == 30 {
			t.Fatalf("30 calls after B's last change each read the head before the gate")
		}
	}
	if lock, read := call("B is still quiet"); lock != 1 || read != 0 {
		t.Errorf("a call with B quiet locked the head %d times and read it %d times outside a transaction, want 1 and 0", lock, read)
	}
	// A Board change of A's own made outside the Board's lock (a tool lock) is applied
	// from its event in memory (follow.go): no head read, no build, and the calls after it
	// read none either.
	if _, err := p.a[0].Directory().CreateConnection(ctx, p.admin, "default", contract.CreateConnectionRequest{Name: "laptop"}); err != nil {
		t.Fatal(err)
	}
	builds := p.a[0].BoardBuilds("default")
	if _, err := p.a[0].LockTool(ctx, p.admin, "default", "laptop", contract.ToolLock{Tool: "test.send@1", Digest: sendDigest}); err != nil {
		t.Fatal(err)
	}
	if lock, read := call("A locked a Tool"); lock != 1 || read != 0 {
		t.Errorf("the call after A locked a Tool locked the head %d times and read it %d times outside a transaction, want 1 and 0 (the lock applied from its event)", lock, read)
	}
	if n := p.a[0].BoardBuilds("default") - builds; n != 0 {
		t.Errorf("A built its Board %d times after its tool lock, want none: the lock is applied from its event", n)
	}
	if lock, read := call("after A's tool lock"); lock != 1 || read != 0 {
		t.Errorf("the next call locked the head %d times and read it %d times outside a transaction, want 1 and 0", lock, read)
	}
}
