package authority_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// refusing is a State that refuses, once, the next event of the type armed names (nil:
// none), and then disarms.
type refusing struct{ armed *atomic.Pointer[string] }

func (r refusing) Apply(e store.Event) error {
	if typ := r.armed.Load(); typ != nil && e.Type == *typ && r.armed.CompareAndSwap(typ, nil) {
		return errors.New("refused by the test")
	}
	return nil
}

// joinRefusing joins a refusing State to a's project log and returns its arm: the next
// event of type typ that State is given, it refuses. refused reports whether it did since.
func joinRefusing(a *authority.Authority) (arm func(typ string), refused func() bool) {
	armed := new(atomic.Pointer[string])
	authority.JoinLog(a, func() refusing { return refusing{armed: armed} })
	return func(typ string) { armed.Store(&typ) }, func() bool { return armed.Load() == nil }
}

// TestAdmission_CommittedButNotApplied: an admission whose transaction committed, but
// whose events a State of its instance failed to apply after the commit
// (eventlog.ErrNotApplied), is answered as what it is, committed, never as a failure an
// Agent would try again; the next catch-up applies what the State missed, and both
// instances hold its fact (docs/architecture.md, "The project state and its driver").
func TestAdmission_CommittedButNotApplied(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			ctx := t.Context()
			p := newOpsPair(t, be.open)
			arm, refused := joinRefusing(p.a[0])
			if ans, err := p.ops[0].Call(ctx, p.agent, assertCall("before")); err != nil || state(ans) != contract.OpDone {
				t.Fatalf("the call before = %v %+v", err, ans.Result)
			}
			arm(event.BatchApplied)
			ans, err := p.ops[0].Call(ctx, p.agent, assertCall("committed"))
			if err != nil || state(ans) != contract.OpDone {
				t.Fatalf("the call whose events a State refused after its commit = %v %+v, want done: it committed", err, ans.Result)
			}
			if !refused() {
				t.Fatal("no State refused the call's batch.applied: the test did not reach the path it is for")
			}
			if ans.Meta.Ordinal != 2 {
				t.Errorf("ordinal %d, want 2", ans.Meta.Ordinal)
			}
			if ans, err := p.ops[0].Call(ctx, p.agent, assertCall("after")); err != nil || state(ans) != contract.OpDone || ans.Meta.Ordinal != 3 {
				t.Fatalf("the call after = %v %+v, want done at ordinal 3", err, ans.Result)
			}
			for i, a := range p.a {
				for _, x := range []string{"before", "committed", "after"} {
					if !holdsSeen(t, a, x) {
						t.Errorf("instance %d lacks seen(%s)", i, x)
					}
				}
			}
		})
	}
}

// TestDispatcher_CommittedButNotApplied: a worker's claim or report whose transaction
// committed, but whose events a State of its instance failed to apply after the commit,
// is answered as accepted: a claim refused after it committed would leave its work
// claimed and never run, a report refused would be sent again. The Operation settles
// through the next catch-up.
func TestDispatcher_CommittedButNotApplied(t *testing.T) {
	for _, typ := range []string{event.WorkClaimed, event.WorkReported} {
		t.Run(typ, func(t *testing.T) {
			f := newHopFixture(t)
			arm, refused := joinRefusing(f.a)
			l, agents, rows := f.servedFetches(t, "b")
			arm(typ)
			if err := f.claim(l, rows[0]); err != nil {
				t.Fatalf("Claim = %v, want accepted", err)
			}
			if _, err := f.d.Report(t.Context(), f.conn, okReport(l, rows[0], "b.txt")); err != nil {
				t.Fatalf("Report = %v, want accepted", err)
			}
			if !refused() {
				t.Fatalf("no State refused the %s event: the test did not reach the path it is for", typ)
			}
			st, err := f.ops.Operations().State(t.Context(), agents[0])
			if err != nil {
				t.Fatal(err)
			}
			if got := st.State[0].State; got != contract.OpDone {
				t.Errorf("the Operation is %s, want %s", got, contract.OpDone)
			}
		})
	}
}

// TestOperations_HookCommittedButNotApplied: a coding agent's hook call and its outcome,
// written through the ledger's write sequence, are answered as committed when a State
// of their instance failed to apply them after the commit: a hook refused by an error
// would stop a call the log shows allowed, and never report its outcome.
func TestOperations_HookCommittedButNotApplied(t *testing.T) {
	f := newHookFixture(t)
	arm, refused := joinRefusing(f.a)
	arm(event.OpAdmitted)
	if _, err := f.ops.Operations().Hook(t.Context(), f.coder, hookCall("toolu_1", "Read", `{"file_path":"/r/a.go"}`, "a.go", "", 0)); err != nil {
		t.Fatalf("Hook = %v, want allowed: its admission committed", err)
	}
	if !refused() {
		t.Fatal("no State refused the hook call's admission: the test did not reach the path it is for")
	}
	arm(event.HookReported)
	exit := int64(0)
	out := contract.HookOutcome{CallID: "toolu_1", Tool: "Read", OK: true, ExitCode: &exit, OutputDigest: "sha256:" + strings.Repeat("ab", 32), OutputBytes: 12}
	if _, err := f.ops.Operations().HookOutcome(t.Context(), f.coder, out); err != nil {
		t.Fatalf("HookOutcome = %v, want accepted: it committed", err)
	}
	if !refused() {
		t.Fatal("no State refused the hook call's outcome: the test did not reach the path it is for")
	}
	calls, err := f.ops.Operations().HookCalls(t.Context(), f.admin, "default", contract.AgentID(f.coder.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].Outcome == nil {
		t.Fatalf("hook calls = %+v, want the one call with its outcome", calls)
	}
}

// TestTasks_ClaimCommittedButNotApplied: a runtime's task claim whose transaction
// committed, but whose event a State of its instance failed to apply after the commit,
// is answered with the task it claimed: an error would leave the task claimed under a
// lease no runtime holds until that lease ends.
func TestTasks_ClaimCommittedButNotApplied(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			ctx := t.Context()
			p := newOpsPair(t, be.open)
			arm, refused := joinRefusing(p.a[0])
			posted, err := p.a[0].PostTask(ctx, p.admin, "default", contract.TaskRequest{Agent: "calc", Text: "Check the totals."})
			if err != nil {
				t.Fatal(err)
			}
			arm(event.TaskClaimed)
			c, err := p.a[0].ClaimTask(ctx, p.agent, contract.TaskClaimRequest{})
			if err != nil || c.Task == nil || c.Task.ID != posted.ID {
				t.Fatalf("ClaimTask = %+v, %v, want the task posted: its claim committed", c, err)
			}
			if !refused() {
				t.Fatal("no State refused the task's claim: the test did not reach the path it is for")
			}
			// Reported under the claim it was answered: the claim is the runtime's.
			done, err := p.a[0].ReportTask(ctx, p.agent, posted.ID, contract.TaskReport{Attempt: c.Task.Attempt, State: contract.TaskCompleted, TaskResult: contract.TaskResult{Final: "Checked.", ClosedCases: []contract.ClosedCase{}}})
			if err != nil || done.State != contract.TaskCompleted {
				t.Fatalf("the report under the claim = %+v, %v, want completed", done, err)
			}
		})
	}
}
