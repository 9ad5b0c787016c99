package authority_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// TestAuthority_CancelTask_Unclaimed: a task no runtime took yet ends cancelled at once,
// with nothing run; no runtime claims it; a second cancel answers it as it stands; a
// finished task is refused task_finished; only a member cancels.
func TestAuthority_CancelTask_Unclaimed(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	posted, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "Verify job calc-001."})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.a.CancelTask(ctx, f.agent, "default", posted.ID)
	wantCode(t, err, contract.CodeForbidden)
	_, err = f.a.CancelTask(ctx, f.admin, "default", "t-0000000000000000")
	wantCode(t, err, contract.CodeNotFound)

	got, err := f.a.CancelTask(ctx, f.admin, "default", posted.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != contract.TaskCancelled || got.Cancel == nil || got.Cancel.By != f.admin.Principal() || got.Result == nil ||
		!strings.Contains(got.Result.Teaching, "before a runtime took it") {
		t.Fatalf("cancelled = %+v (result %+v), want cancelled at once by %s", got, got.Result, f.admin.Principal())
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task != nil {
		t.Fatalf("claim after the cancel = %+v, %v; want no task", c.Task, err)
	}
	again, err := f.a.CancelTask(ctx, f.admin, "default", posted.ID)
	if err != nil || again.State != contract.TaskCancelled {
		t.Fatalf("cancel again = %+v, %v; want the task as it stands", again, err)
	}
	shown, err := f.a.Task(ctx, f.admin, "default", posted.ID)
	if err != nil || shown.State != contract.TaskCancelled || shown.Cancel == nil {
		t.Fatalf("the task as read = %+v, %v; want cancelled", shown, err)
	}

	done, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "another"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task == nil {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	if _, err := f.a.ReportTask(ctx, f.agent, done.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCompleted, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.a.CancelTask(ctx, f.admin, "default", done.ID)
	wantCode(t, err, contract.CodeTaskFinished)
}

// TestAuthority_CancelTask_Claimed: a claimed task is marked; the runtime's held renewal
// answers at once with the cancel; a report of cancelled is refused for a task nobody
// cancelled and kept for one a member did, with the Operations named.
func TestAuthority_CancelTask_Claimed(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	posted, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{})
	if err != nil || c.Task == nil {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	none := []contract.ClosedCase{}
	_, err = f.a.ReportTask(ctx, f.agent, posted.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCancelled, TaskResult: contract.TaskResult{ClosedCases: none}})
	wantCode(t, err, contract.CodeInvalidArgument)
	_, err = f.a.RenewTask(ctx, f.agent, posted.ID, contract.TaskRenewal{Attempt: 1, WaitMS: int(contract.MaxTaskClaimWait.Milliseconds()) + 1})
	wantCode(t, err, contract.CodeInvalidArgument)

	renewed := make(chan contract.Task, 1)
	go func() {
		// Held for up to a minute: only the cancel below answers it in time for the test.
		got, err := f.a.RenewTask(ctx, f.agent, posted.ID, contract.TaskRenewal{Attempt: 1, WaitMS: int(contract.MaxTaskClaimWait.Milliseconds())})
		if err != nil {
			t.Error(err)
		}
		renewed <- got
	}()
	marked, err := f.a.CancelTask(ctx, f.admin, "default", posted.ID)
	if err != nil {
		t.Fatal(err)
	}
	if marked.State != contract.TaskClaimed || marked.Cancel == nil {
		t.Fatalf("cancel of a claimed task = %+v, want it claimed with the cancel marked", marked)
	}
	if got := <-renewed; got.Cancel == nil || got.Cancel.By != f.admin.Principal() {
		t.Fatalf("the held renewal answered %+v, want the cancel", got)
	}
	// A renewal of a task already cancelled is answered at once, not held.
	if got, err := f.a.RenewTask(ctx, f.agent, posted.ID, contract.TaskRenewal{Attempt: 1, WaitMS: int(contract.MaxTaskClaimWait.Milliseconds())}); err != nil || got.Cancel == nil {
		t.Fatalf("renewal after the cancel = %+v, %v", got, err)
	}
	ops := []contract.TaskOperation{{CallID: "c1", Tool: contract.ToolApplyAction, Ordinal: 3}}
	_, err = f.a.ReportTask(ctx, f.agent, posted.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCancelled,
		TaskResult: contract.TaskResult{ClosedCases: none, Operations: []contract.TaskOperation{{Tool: contract.ToolApplyAction}}}})
	wantCode(t, err, contract.CodeInvalidArgument)
	done, err := f.a.ReportTask(ctx, f.agent, posted.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCancelled, TaskResult: contract.TaskResult{ClosedCases: none, Operations: ops}})
	if err != nil {
		t.Fatal(err)
	}
	if done.State != contract.TaskCancelled || len(done.Result.Operations) != 1 || done.Result.Operations[0] != ops[0] {
		t.Fatalf("reported = %+v, want cancelled naming %v", done, ops)
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task != nil {
		t.Fatalf("claim after the cancelled report = %+v, %v; want none", c.Task, err)
	}
}

// TestAuthority_CancelTask_Waiting: a task whose work waits on a decision stays waiting
// when cancelled — the Operation is not cancelled — and the decision wakes it with the
// cancel on it, for its runtime to end it.
func TestAuthority_CancelTask_Waiting(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	posted, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "mark it"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task == nil {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	req := f.pendingMark(t, "t")
	waiting := []contract.TaskWait{{CallID: "c1", Tool: contract.ToolApplyAction, Ordinal: 1}}
	if _, err := f.a.ReportTask(ctx, f.agent, posted.ID, contract.TaskReport{Attempt: 1, State: contract.TaskWaiting, Waiting: waiting,
		TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}}); err != nil {
		t.Fatal(err)
	}
	marked, err := f.a.CancelTask(ctx, f.admin, "default", posted.ID)
	if err != nil || marked.State != contract.TaskWaiting || marked.Cancel == nil {
		t.Fatalf("cancel of a waiting task = %+v, %v; want it waiting with the cancel marked", marked, err)
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task != nil {
		t.Fatalf("claim before the decision = %+v, %v; want none", c.Task, err)
	}
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	w, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{})
	if err != nil || w.Task == nil || !w.Wake || w.Task.Cancel == nil {
		t.Fatalf("claim after the decision = %+v, %v; want a wake with the cancel", w, err)
	}
}
