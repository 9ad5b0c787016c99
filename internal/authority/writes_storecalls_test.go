package authority_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

// TestWrites_StoreCalls counts the store calls and head reads of the writes that run the
// driver's one write sequence (docs/architecture.md, "The project state and its
// driver"): each reads the log's head once, in its transaction (an acknowledgement, and a
// decision that leaves the Board unchanged, none: they decide at the head their call
// read), and catches its State up after the commit from memory, with no read. The bounds
// are what each write cost before it ran that sequence, less the head reads it no longer
// makes.
func TestWrites_StoreCalls(t *testing.T) {
	counted := func(t *testing.T) *storecount.Store {
		t.Helper()
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return storecount.Wrap(st)
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name         string
		calls, heads int64
		// wereCalls and wereHeads are what the write cost before it ran the sequence.
		wereCalls, wereHeads int64
		// prepare sets the write up on a counted store and returns the write to count.
		prepare func(t *testing.T, st *storecount.Store) func() error
	}{
		{name: "a hook call run freely", calls: 4, heads: 2, wereCalls: 6, wereHeads: 4, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHookFixtureOver(t, st)
			return func() error {
				_, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("toolu_1", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0))
				return err
			}
		}},
		{name: "a hook call refused", calls: 4, heads: 2, wereCalls: 6, wereHeads: 4, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHookFixtureOver(t, st)
			return func() error {
				_, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("toolu_1", "WebFetch", `{"url":"https://example.com"}`, "", "", 0))
				return err
			}
		}},
		{name: "a hook call's outcome", calls: 3, heads: 1, wereCalls: 4, wereHeads: 2, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHookFixtureOver(t, st)
			if _, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("toolu_1", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0)); err != nil {
				t.Fatal(err)
			}
			exit := int64(0)
			return func() error {
				_, err := f.ops.Operations().HookOutcome(t.Context(), f.coder, contract.HookOutcome{CallID: "toolu_1", Tool: "Read", OK: true,
					ExitCode: &exit, OutputDigest: digest, OutputBytes: 12})
				return err
			}
		}},
		{name: "a hook call to decide, withdrawn undecided", calls: 13, heads: 5, wereCalls: 15, wereHeads: 7, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHookFixtureOver(t, st)
			return func() error {
				v, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("toolu_1", "Bash", `{"command":"ls"}`, "", "ls", 0))
				if err == nil && v.ErrorCode != contract.CodeHookUndecided {
					t.Errorf("the hook's verdict is %+v, want hook_undecided", v)
				}
				return err
			}
		}},
		{name: "a request expired by the sweep", calls: 6, heads: 3, wereCalls: 8, wereHeads: 5, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := opsFixtureOver(t, st, time.Second)
			f.pendingMark(t, "late")
			f.clock.Add(2 * time.Hour)
			return func() error {
				n, err := f.ops.Operations().SweepRequests(t.Context())
				if err == nil && n != 1 {
					t.Errorf("SweepRequests settled %d requests, want 1", n)
				}
				return err
			}
		}},
		{name: "an artifact kept", calls: 5, heads: 2, wereCalls: 5, wereHeads: 2, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := opsFixtureOver(t, st, time.Millisecond)
			return func() error {
				_, err := f.ops.Operations().PutArtifact(t.Context(), f.agent, []byte("a long result"))
				return err
			}
		}},
		{name: "an answer that acknowledges an outcome", calls: 3, heads: 1, wereCalls: 3, wereHeads: 1, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHopFixtureOn(t, opsFixtureOver(t, st, time.Millisecond))
			l := f.startup(t, "wkr-a")
			f.failed(t, l, f.fetch(t, "a.txt"))
			return func() error {
				ans, err := f.ops.Call(t.Context(), f.agent, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{},
					Delivered: func(o int64) bool { return o == 1 }})
				if err == nil && (len(ans.Result.Operations) != 1 || ans.Result.Operations[0].Result != nil) {
					t.Errorf("the answer's strip is %+v, want operation 1 acknowledged, its result shown no more", ans.Result.Operations)
				}
				return err
			}
		}},
		{name: "a denial", calls: 4, heads: 1, wereCalls: 5, wereHeads: 2, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := opsFixtureOver(t, st, time.Second)
			r := f.pendingMark(t, "deny")
			return func() error {
				_, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictDeny, Reason: "test"})
				return err
			}
		}},
		{name: "an approval that changes the Board", calls: 6, heads: 2, wereCalls: 6, wereHeads: 2, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := opsFixtureOver(t, st, time.Second)
			r := f.pendingMark(t, "approve")
			return func() error {
				_, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove, Reason: "test"})
				return err
			}
		}},
		{name: "an approved recovery request", calls: 5, heads: 2, wereCalls: 5, wereHeads: 2, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHopFixtureOn(t, opsFixtureOver(t, st, time.Millisecond))
			boss := newOrchestrator(t, f.a, f.admin, "boss")
			l := f.startup(t, "wkr-a")
			id := f.fetch(t, "a.txt")
			f.failed(t, l, id)
			if _, err := f.a.PublishPolicy(t.Context(), f.admin, "default", contract.PublishPolicyRequest{File: "r.toml",
				Text: "[recovery_policy]\nretry_failed = false\n"}); err != nil {
				t.Fatal(err)
			}
			ans, err := f.ops.Call(t.Context(), boss, operation.Call{Tool: contract.ToolApplyAction, Input: retryIn(id, "the disk was cleaned")})
			if err != nil || !ans.Result.Accepted {
				t.Fatalf("the orchestrator's retry = %+v, %v; want a recovery request", ans.Result, err)
			}
			r := f.pendingRequest(t)
			return func() error {
				got, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove})
				if err == nil && got.State != contract.RequestApproved {
					t.Errorf("the recovery request is %s, want approved", got.State)
				}
				return err
			}
		}},
		{name: "a poll that asks again for a changed approved call", calls: 17, heads: 5, wereCalls: 19, wereHeads: 7, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHopFixtureOn(t, opsFixtureOver(t, st, time.Millisecond))
			f.approvedSend(t)
			if _, err := f.a.LockTool(t.Context(), f.admin, "default", "laptop", contract.ToolLock{Tool: "test.send@1", Digest: resendDigest}); err != nil {
				t.Fatal(err)
			}
			l := f.startup(t, "wkr-a")
			return func() error {
				if rows := f.poll(t, l, sendTool(resendDigest)); len(rows) != 0 {
					t.Errorf("Poll served %d rows of a call no longer as approved, want none", len(rows))
				}
				if rs := f.pendingRequest(t); rs.Vector.ToolDigest != resendDigest {
					t.Errorf("the new request names %s, want the Tool as it is locked now", rs.Vector.ToolDigest)
				}
				return nil
			}
		}},
		{name: "a member's retry", calls: 4, heads: 2, wereCalls: 7, wereHeads: 5, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHopFixtureOn(t, opsFixtureOver(t, st, time.Millisecond))
			l := f.startup(t, "wkr-a")
			id := f.fetch(t, "a.txt")
			f.failed(t, l, id)
			return func() error {
				_, err := f.ops.Operations().Retry(t.Context(), f.admin, "default", id, contract.RetryRequest{Reason: "the disk was cleaned"})
				return err
			}
		}},
		{name: "the authority's retry", calls: 7, heads: 4, wereCalls: 10, wereHeads: 7, prepare: func(t *testing.T, st *storecount.Store) func() error {
			f := newHopFixtureOn(t, opsFixtureOver(t, st, time.Millisecond))
			if _, err := f.a.PublishPolicy(t.Context(), f.admin, "default", contract.PublishPolicyRequest{File: "r.toml",
				Text: "[recovery_policy]\nmax_attempts = 2\nretry_by = \"authority\"\n"}); err != nil {
				t.Fatal(err)
			}
			f.clock.Add(time.Minute)
			l := f.startup(t, "wkr-a")
			f.failed(t, l, f.fetch(t, "a.txt"))
			return func() error {
				n, err := f.ops.Operations().SweepRetries(t.Context())
				if err == nil && n != 1 {
					t.Errorf("SweepRetries acted %d times, want 1", n)
				}
				return err
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := counted(t)
			write := tt.prepare(t, st)
			st.Reset()
			if err := write(); err != nil {
				t.Fatal(err)
			}
			c := st.Counts()
			if tt.calls > tt.wereCalls || tt.heads > tt.wereHeads {
				t.Errorf("the bound of %d store calls and %d head reads is above what the write cost before, %d and %d", tt.calls, tt.heads, tt.wereCalls, tt.wereHeads)
			}
			if c.Calls > tt.calls || c.HeadReads > tt.heads {
				t.Errorf("%d store calls and %d head reads, want at most %d and %d (before the write sequence: %d and %d): %v, heads from %v",
					c.Calls, c.HeadReads, tt.calls, tt.heads, tt.wereCalls, tt.wereHeads, c.ByMethod, c.HeadsFrom)
			}
		})
	}
}
