package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_TaskTree: an orchestrator's task asks writer for work through docket.ask
// under a class of the delegation policy; the orchestrator's Agent page links each task
// to its tree, and the tree page shows who asked whom with states, following the asked
// task to completed without a reload. The API returns the same tree.
func TestPages_TaskTree(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	member := mustCaller(t, r.testServer)
	policy := "[delegation_policy]\n[[delegation_policy.class]]\nname = \"writing\"\naction = \"docket.ask\"\nagent = \"writer\"\n"
	if _, err := r.a.PublishPolicy(ctx, member, "default", contract.PublishPolicyRequest{File: "d.toml", Text: policy}); err != nil {
		t.Fatal(err)
	}
	agents := map[string]identity.Caller{}
	for _, name := range []string{"boss", "writer"} {
		at, err := r.a.Directory().CreateAgent(ctx, member, "default", contract.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if agents[name], err = r.a.Directory().Authenticate(ctx, identity.Token(at.Token)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := r.a.PostTask(ctx, member, "default", contract.TaskRequest{Agent: "boss", Text: "Write the brief with writer."})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := r.a.ClaimTask(ctx, agents["boss"], contract.TaskClaimRequest{}); err != nil || c.Task == nil {
		t.Fatalf("boss's claim = %+v, %v", c, err)
	}
	in := &contract.ApplyActionInput{Action: contract.ActionAsk, Params: contract.Args{"agent": contract.StringValue("writer"), "task": contract.StringValue("Draft the brief.")}}
	ans, err := r.ops.Call(ctx, agents["boss"], operation.Call{Tool: contract.ToolApplyAction, Input: in, Conversation: root.Conversation})
	if err != nil || ans.Result.ErrorCode != "" {
		t.Fatalf("docket.ask = %+v, %v", ans.Result, err)
	}
	ts, err := r.a.Tasks(ctx, member, "default", "writer")
	if err != nil || len(ts) != 1 {
		t.Fatalf("writer's tasks = %+v, %v; want the asked one", ts, err)
	}
	asked := ts[0]

	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents/"+agents["boss"].ID),
		chromedp.WaitVisible(chromedp.ID("tree-link-"+string(root.ID))),
		chromedp.Click(chromedp.ID("tree-link-"+string(root.ID))),
		chromedp.WaitVisible(chromedp.ID("tree-"+string(asked.ID)+"-queued")))
	r.b.Screenshot(screenshots, "task-tree")
	if got := r.b.Text("#tree-" + string(root.ID) + "-claimed"); !strings.Contains(got, "boss") || !strings.Contains(got, "Write the brief") {
		t.Errorf("the root row reads %q, want boss's task", got)
	}
	if got := r.b.Text("#tree-" + string(asked.ID) + "-queued"); !strings.Contains(got, "writer") || !strings.Contains(got, "asked by boss") || !strings.Contains(got, "Draft the brief.") {
		t.Errorf("the asked row reads %q, want writer's task, asked by boss", got)
	}

	// writer runs its task; the page follows it to completed.
	if c, err := r.a.ClaimTask(ctx, agents["writer"], contract.TaskClaimRequest{}); err != nil || c.Task == nil || c.Task.ID != asked.ID {
		t.Fatalf("writer's claim = %+v, %v", c, err)
	}
	if _, err := r.a.ReportTask(ctx, agents["writer"], asked.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCompleted,
		TaskResult: contract.TaskResult{Final: "The draft is done.", ClosedCases: []contract.ClosedCase{}}}); err != nil {
		t.Fatal(err)
	}
	r.b.Do(chromedp.WaitVisible(chromedp.ID("tree-" + string(asked.ID) + "-completed")))
	if got := r.b.Text("#tree-" + string(asked.ID) + "-completed"); !strings.Contains(got, "The draft is done.") {
		t.Errorf("the completed row reads %q, want writer's final answer", got)
	}
	if ps := r.b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
}
