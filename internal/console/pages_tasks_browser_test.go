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

// TestPages_AgentTask: a person gives an Agent a task from its page; the task is listed,
// and as the Agent's runtime takes it and reports it the list follows live, with the
// Case it closed. A refused task is said above the form, which keeps what was typed; a
// message is added to a conversation from its page.
func TestPages_AgentTask(t *testing.T) {
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
	r.signIn(t)
	page := r.URL + "/projects/default/agents/" + string(at.Agent.ID)
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("task-form")))

	// A pin to a Case Type the project does not have is refused when posted, naming the
	// ones it has.
	r.b.Do(chromedp.SendKeys(chromedp.ID("task-text"), "Verify job calc-001."),
		chromedp.SendKeys(chromedp.ID("task-case-type"), "exploraton"),
		chromedp.SendKeys(chromedp.ID("task-key"), `{"topic": "calc-001"}`),
		chromedp.Click(chromedp.ID("post-task")),
		chromedp.WaitVisible(chromedp.ID("task-error")))
	if got := r.b.Text("#task-error"); !strings.Contains(got, `no Case Type "exploraton"`) || !strings.Contains(got, "did you mean exploration?") {
		t.Errorf("the refusal says %q, want the Case Types the project has", got)
	}
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("task-form")))

	// A key that is not JSON is refused, and the form keeps the task.
	r.b.Do(chromedp.SendKeys(chromedp.ID("task-text"), "Verify job calc-001."),
		chromedp.SendKeys(chromedp.ID("task-case-type"), "exploration"),
		chromedp.SendKeys(chromedp.ID("task-key"), "topic=calc-001"),
		chromedp.Click(chromedp.ID("post-task")),
		chromedp.WaitVisible(chromedp.ID("task-error")))
	if got := r.b.Text("#task-error"); !strings.Contains(got, "JSON object") {
		t.Errorf("the refusal says %q, want the key's form taught", got)
	}
	if got := browsertest.Run(r.b, chromedp.Value(chromedp.ID("task-text"))); got != "Verify job calc-001." {
		t.Errorf("after the refusal the task field holds %q, want what was typed", got)
	}

	r.b.Do(chromedp.SetValue(chromedp.ID("task-key"), `{"topic": "calc-001"}`),
		chromedp.Click(chromedp.ID("post-task")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "posted") {
		t.Fatalf("after posting, the notice is %q", got)
	}
	ts, err := r.a.Tasks(ctx, mustCaller(t, r.testServer), "default", "runner")
	if err != nil || len(ts) != 1 || ts[0].CaseType != "exploration" || ts[0].BusinessKey.JSON() != `{"topic":"calc-001"}` {
		t.Fatalf("tasks of runner = %+v, %v; want the one posted, pinned to job calc-001", ts, err)
	}
	task := ts[0]
	r.b.Do(chromedp.WaitVisible(chromedp.ID("task-" + string(task.ID) + "-queued-0")))
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agent page with a task: %q", ps)
	}

	// The runtime takes it and reports it: the page follows without a reload.
	claim, err := r.a.ClaimTask(ctx, runtime, contract.TaskClaimRequest{})
	if err != nil || claim.Task == nil || claim.Task.ID != task.ID {
		t.Fatalf("claim = %+v, %v; want the posted task", claim, err)
	}
	rep := contract.TaskReport{Attempt: 1, State: contract.TaskCompleted, TaskResult: contract.TaskResult{Final: "Job calc-001 is verified.",
		ClosedCases: []contract.ClosedCase{{CaseID: "case-7", Root: "case-7:root", Disposition: contract.DispositionCompleted}}}}
	if _, err := r.a.ReportTask(ctx, runtime, task.ID, rep); err != nil {
		t.Fatal(err)
	}
	row := "task-" + string(task.ID) + "-completed-1"
	r.b.Do(chromedp.WaitVisible(chromedp.ID(row)))
	if got := r.b.Text("#" + row); !strings.Contains(got, "closed case-7 completed") || !strings.Contains(got, "verified") {
		t.Errorf("the completed task reads %q, want its closed Case and final answer", got)
	}
	r.b.Screenshot(screenshots, "agent-task")

	// A message goes to a conversation from its page.
	msg, err := json.Marshal(map[string]string{"role": "user", "text": "Verify job calc-001."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.a.SaveConversation(ctx, runtime, task.Conversation, contract.ConversationSave{Messages: []json.RawMessage{msg}}); err != nil {
		t.Fatal(err)
	}
	r.b.Do(chromedp.Navigate(page+"/conversations/"+string(task.Conversation)), chromedp.WaitVisible(chromedp.ID("message-form")),
		chromedp.SendKeys(chromedp.ID("message-text"), "Use the second input file."),
		chromedp.Click(chromedp.ID("post-message")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	ts, err = r.a.Tasks(ctx, mustCaller(t, r.testServer), "default", "runner")
	if err != nil || len(ts) != 2 || ts[1].Kind != contract.TaskKindMessage || ts[1].Conversation != task.Conversation {
		t.Fatalf("tasks after the message = %+v, %v; want a message in %s", ts, err, task.Conversation)
	}
}
