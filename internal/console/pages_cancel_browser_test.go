package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_CancelTask: a person cancels tasks from an Agent's page. A task no runtime
// took yet ends cancelled at once. A task its runtime runs, cancelled beside the
// conversation pane, shows the cancel asked; the runtime learns of it from its held lease
// renewal and reports the task cancelled with the Operation it admitted, and the page
// follows without a reload.
func TestPages_CancelTask(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	at, err := r.a.Directory().CreateAgent(ctx, mustCaller(t, r.testServer), "default", contract.CreateAgentRequest{Name: "runner"})
	if err != nil {
		t.Fatal(err)
	}
	runtime, err := r.a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	member := mustCaller(t, r.testServer)
	queued, err := r.a.PostTask(ctx, member, "default", contract.TaskRequest{Agent: "runner", Text: "Tidy the workspace."})
	if err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	page := r.URL + "/projects/default/agents/" + string(at.Agent.ID)

	// Unclaimed: cancelled at once, from the task list.
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("cancel-"+string(queued.ID))),
		chromedp.Click(chromedp.ID("cancel-"+string(queued.ID))),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Task cancelled") {
		t.Errorf("after the cancel the notice is %q", got)
	}
	row := "task-" + string(queued.ID) + "-cancelled-0-cancel"
	r.b.Do(chromedp.WaitVisible(chromedp.ID(row)))
	if got := r.b.Text("#" + row); !strings.Contains(got, "cancelled by ada") || !strings.Contains(got, "none of its calls was admitted") {
		t.Errorf("the cancelled task reads %q, want who cancelled it, by name, and that nothing ran", got)
	}
	if n := browsertest.Run(r.b, chromedp.Evaluate[int](`document.querySelectorAll("#cancel-`+string(queued.ID)+`").length`)); n != 0 {
		t.Errorf("a cancelled task still offers Cancel")
	}

	// Claimed, with its conversation in the pane: cancelled beside the pane.
	running, err := r.a.PostTask(ctx, member, "default", contract.TaskRequest{Agent: "runner", Text: "Verify job calc-001."})
	if err != nil {
		t.Fatal(err)
	}
	claim, err := r.a.ClaimTask(ctx, runtime, contract.TaskClaimRequest{})
	if err != nil || claim.Task == nil || claim.Task.ID != running.ID {
		t.Fatalf("claim = %+v, %v; want %s", claim, err, running.ID)
	}
	msg, err := json.Marshal(map[string]string{"role": "user", "text": "Verify job calc-001."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.a.SaveConversation(ctx, runtime, running.Conversation, contract.ConversationSave{Messages: []json.RawMessage{msg}}); err != nil {
		t.Fatal(err)
	}
	renewed := make(chan contract.Task, 1)
	go func() {
		// The runtime's renewal, held until the cancel comes.
		got, err := r.a.RenewTask(ctx, runtime, running.ID, contract.TaskRenewal{Attempt: 1, WaitMS: int(contract.MaxTaskClaimWait.Milliseconds())})
		if err != nil {
			t.Error(err)
		}
		renewed <- got
	}()
	paneCancel := "pane-cancel-" + string(running.ID)
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID(paneCancel)),
		chromedp.Click(chromedp.CSS("#"+paneCancel+" button")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Cancel sent") {
		t.Errorf("after the cancel the notice is %q", got)
	}
	asked := "task-" + string(running.ID) + "-claimed-1-cancel"
	r.b.Do(chromedp.WaitVisible(chromedp.ID(asked)))
	if got := r.b.Text("#" + asked); !strings.Contains(got, "cancel asked by ada") {
		t.Errorf("the task being cancelled reads %q, want the cancel asked", got)
	}
	if got := <-renewed; got.Cancel == nil {
		t.Fatalf("the held renewal answered %+v, want the cancel", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agent page with a task being cancelled: %q", ps)
	}
	rep := contract.TaskReport{Attempt: 1, State: contract.TaskCancelled, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{},
		Teaching:   "cancelled by a member: the run sent no further model request or tool call; the Operation it admitted keeps its outcome",
		Operations: []contract.TaskOperation{{CallID: "call_1", Tool: contract.ToolApplyAction, Ordinal: 1}}}}
	if _, err := r.a.ReportTask(ctx, runtime, running.ID, rep); err != nil {
		t.Fatal(err)
	}
	ended := "task-" + string(running.ID) + "-cancelled-1-cancel"
	r.b.Do(chromedp.WaitVisible(chromedp.ID(ended)))
	if got := r.b.Text("#" + ended); !strings.Contains(got, "admitted ApplyAction call_1 (operation 1)") || !strings.Contains(got, "cancelled by ada") {
		t.Errorf("the cancelled task reads %q, want the Operation it admitted and who cancelled it", got)
	}
	r.b.Screenshot(screenshots, "agent-task-cancelled")
}
