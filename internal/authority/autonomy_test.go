package authority_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/contract"
)

const attendedPolicy = `[autonomy_policy]
default_level           = "attended"
max_operations_per_day  = 2
require_acknowledgement = true
acknowledgement         = "An unattended Agent writes at any hour with no person watching."
`

// TestAutonomy_RunWindows: under a policy that starts Agents attended, a write outside a
// run window is refused outside_run_window and not executed; a member opens a window and
// the same write is admitted.
func TestAutonomy_RunWindows(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	// calc was created under the built-in policy: unattended.
	if a, err := f.a.AgentAutonomy(ctx, f.admin, "default", "calc"); err != nil || a.Level != "unattended" || a.Policy != 1 {
		t.Fatalf("calc's autonomy = %+v, %v; want unattended under version 1", a, err)
	}
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "a.toml", Text: attendedPolicy}); err != nil {
		t.Fatal(err)
	}
	if a, _ := f.a.AgentAutonomy(ctx, f.admin, "default", "calc"); a.Level != "unattended" {
		t.Errorf("a published policy changed an existing Agent's level to %s", a.Level)
	} else if !strings.Contains(a.Acknowledgement, "no person watching") {
		t.Errorf("calc's autonomy under a policy that requires an acknowledgement names %q, want its text", a.Acknowledgement)
	}
	if _, err := f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "attended"}); err != nil {
		t.Fatal(err)
	}

	ans := f.call(t, f.ops, markCall("a"))
	if ans.Result.ErrorCode != contract.CodeOutsideRunWindow || ans.Result.RequestExecuted == nil || *ans.Result.RequestExecuted {
		t.Fatalf("an attended write outside a window = %s (executed %v), want outside_run_window, not executed", ans.Result.ErrorCode, ans.Result.RequestExecuted)
	}
	if _, err := f.a.OpenRunWindow(ctx, f.agent, "default", "calc", contract.OpenWindowRequest{Minutes: 30}); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("an Agent opening its own window = %v, want forbidden", err)
	}
	a, err := f.a.OpenRunWindow(ctx, f.admin, "default", "calc", contract.OpenWindowRequest{Minutes: 30})
	if err != nil || len(a.Windows) != 1 {
		t.Fatalf("OpenRunWindow = %+v, %v", a, err)
	}
	if ans := f.call(t, f.ops, markCall("a")); state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("the same write inside the window = %s %+v, want admitted", ans.Result.ErrorCode, ans.Result.Operations)
	}
	f.clock.Add(31 * time.Minute) // the window closes; the level is read at each admission
	req := f.pendingRequest(t)
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictDeny}); err != nil {
		t.Fatal(err)
	}
	if ans := f.call(t, f.ops, markCall("b"), 1); ans.Result.ErrorCode != contract.CodeOutsideRunWindow {
		t.Errorf("a write after the window closed = %s, want outside_run_window", ans.Result.ErrorCode)
	}

	// Raising calc to unattended needs the stated risk acknowledged.
	_, err = f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "unattended"})
	wantCode(t, err, contract.CodeAcknowledgementMissing)
	a, err = f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "unattended",
		Acknowledgement: "An unattended Agent writes at any hour with no person watching."})
	if err != nil || a.Level != "unattended" || a.Policy != 2 {
		t.Fatalf("SetAgentLevel with the acknowledgement = %+v, %v", a, err)
	}
	if ans := f.call(t, f.ops, markCall("b"), 1); state(ans) != contract.OpWaitingForDecision {
		t.Errorf("an unattended write = %s, want admitted", ans.Result.ErrorCode)
	}

	// An Agent created now starts attended.
	if _, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "late"}); err != nil {
		t.Fatal(err)
	}
	if a, _ := f.a.AgentAutonomy(ctx, f.admin, "default", "late"); a.Level != "attended" {
		t.Errorf("a new Agent's level = %s, want attended", a.Level)
	}
}

// TestAutonomy_ManualAndDailyBound: a manual Agent's writes are a person's to make, and
// below unattended the policy bounds the writes admitted per UTC day.
func TestAutonomy_ManualAndDailyBound(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "a.toml", Text: attendedPolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "manual"}); err != nil {
		t.Fatal(err)
	}
	// A manual Agent's every Action waits for a person, even one that needs no approval;
	// its other writes are a member's to make.
	fetch := &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a.txt")}}
	if ans := f.call(t, f.ops, fetch); state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("a manual Agent's fetch = %s %+v, want waiting for a decision", ans.Result.ErrorCode, ans.Result.Operations)
	}
	req := f.pendingRequest(t)
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	if e := f.opState(t); e.State != contract.OpRunning || e.Stage != contract.StageNotDispatched {
		t.Errorf("the approved fetch = %+v, want queued for a worker", e)
	}
	batch := &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "note", Args: contract.Args{"x": contract.StringValue("y")}}}}}
	if ans := f.call(t, f.ops, batch); ans.Result.ErrorCode != contract.CodeOperationRunning {
		t.Errorf("a write while the fetch runs = %s, want operation_running", ans.Result.ErrorCode)
	}
	authoritytest.NewWorker(t, f.a, f.admin, f.ops, authoritytest.WorkerOptions{
		Sources: []contract.Source{{Name: "workspace", Type: "file", Words: []string{"fetched"}, Tier: contract.TierAttested}},
		Tools:   fetchTool,
	}).Fail(t, f.agent.ID, 1, contract.CodeInvalidArgument, "gone")
	// The batch waits for a member too (TestManual_BoardActsWaitForAMember has the rest).
	if ans := f.call(t, f.ops, batch, 1); state(ans) != contract.OpWaitingForDecision {
		t.Errorf("a manual Agent's batch = %s, want waiting for a decision", ans.Result.ErrorCode)
	}
	req = f.pendingRequest(t)
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictDeny}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "attended"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.OpenRunWindow(ctx, f.admin, "default", "calc", contract.OpenWindowRequest{Minutes: 600}); err != nil {
		t.Fatal(err)
	}
	// The policy's two writes a day: the fetch and the batch.
	if ans := f.call(t, f.ops, markCall("a"), 2); ans.Result.ErrorCode != contract.CodeDailyBound {
		t.Errorf("the third write of the day = %s, want daily_bound", ans.Result.ErrorCode)
	}
	f.clock.Add(24 * time.Hour)
	if _, err := f.a.OpenRunWindow(ctx, f.admin, "default", "calc", contract.OpenWindowRequest{Minutes: 60}); err != nil {
		t.Fatal(err)
	}
	if ans := f.call(t, f.ops, markCall("a"), 2); state(ans) != contract.OpWaitingForDecision {
		t.Errorf("the next day's write = %s, want admitted", ans.Result.ErrorCode)
	}
}

// TestAutonomy_RiskTextChanged: an Agent raised to unattended with the stated risk
// acknowledged is attended again once a new autonomy policy states another risk, until a
// member acknowledges the new text; the old acknowledgement does not carry over.
func TestAutonomy_RiskTextChanged(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	publish := func(text string) {
		t.Helper()
		if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "a.toml", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	const oldRisk, newRisk = "An unattended Agent writes at any hour with no person watching.", "An unattended Agent may now spend money at any hour."
	publish(attendedPolicy)
	if _, err := f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "attended"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "unattended", Acknowledgement: oldRisk}); err != nil {
		t.Fatal(err)
	}
	publish(strings.Replace(attendedPolicy, "max_operations_per_day  = 2", "max_operations_per_day  = 3", 1)) // the same risk
	if a, _ := f.a.AgentAutonomy(ctx, f.admin, "default", "calc"); a.Level != "unattended" || a.Because != "" {
		t.Fatalf("under a new version stating the same risk calc = %+v, want unattended", a)
	}

	publish(strings.Replace(attendedPolicy, oldRisk, newRisk, 1))
	a, err := f.a.AgentAutonomy(ctx, f.admin, "default", "calc")
	if err != nil || a.Level != "attended" || !strings.Contains(a.Because, "changed since a member acknowledged it") || a.Acknowledgement != newRisk {
		t.Fatalf("calc under a new stated risk = %+v, %v; want attended, saying why, with the new text", a, err)
	}
	if ans := f.call(t, f.ops, markCall("a")); ans.Result.ErrorCode != contract.CodeOutsideRunWindow {
		t.Fatalf("a write of calc acknowledged under the old risk = %s, want outside_run_window", ans.Result.ErrorCode)
	}
	_, err = f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "unattended", Acknowledgement: oldRisk})
	wantCode(t, err, contract.CodeAcknowledgementMissing)
	_, err = f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "unattended"})
	wantCode(t, err, contract.CodeAcknowledgementMissing)
	a, err = f.a.SetAgentLevel(ctx, f.admin, "default", "calc", contract.SetLevelRequest{Level: "unattended", Acknowledgement: newRisk})
	if err != nil || a.Level != "unattended" || a.Because != "" {
		t.Fatalf("SetAgentLevel with the new acknowledgement = %+v, %v; want unattended", a, err)
	}
	if ans := f.call(t, f.ops, markCall("a")); state(ans) != contract.OpWaitingForDecision {
		t.Errorf("a write of calc after the new acknowledgement = %s, want admitted", ans.Result.ErrorCode)
	}
}
