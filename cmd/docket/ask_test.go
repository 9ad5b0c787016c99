package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// askPolicyText lets any Agent ask writer, critic and idle for work without a person;
// an ask of anyone else waits for a member.
const askPolicyText = `[delegation_policy]

[[delegation_policy.class]]
name   = "writing"
action = "docket.ask"
agent  = "writer"

[[delegation_policy.class]]
name   = "critique"
action = "docket.ask"
agent  = "critic"

[[delegation_policy.class]]
name   = "idle work"
action = "docket.ask"
agent  = "idle"
`

// askCall is a scripted docket.ask of agent.
func askCall(agent, text string) string {
	return `{"tool":"ApplyAction","arguments":{"action":"docket.ask","params":{"agent":"` + agent + `","task":"` + text + `"}}}`
}

// tasksOf lists agent's tasks with docket task list.
func (r *docketRig) tasksOf(t *testing.T, agent string) []contract.Task {
	t.Helper()
	out, _ := r.exec(t, exitOK, nil, "task", "list", "--agent", agent, "-o", "json")
	var ts []contract.Task
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("docket task list printed %q: %v", out, err)
	}
	return ts
}

// askedUntil waits until agent has a task asked from the task from, and returns it.
func (r *docketRig) askedUntil(t *testing.T, agent string, from contract.TaskID) contract.Task {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, x := range r.tasksOf(t, agent) {
			if x.Parent != nil && x.Parent.Task == from {
				return x
			}
		}
	}
	t.Fatalf("%s has no task asked from %s", agent, from)
	return contract.Task{}
}

// TestAsk_OrchestratorAsksTwoAgents: real docket serve and docket agent serve runtimes
// with scripted models. An orchestrator opens a Case and asks writer and critic for work
// in one turn, under classes of the delegation policy: both asked tasks are open at once
// (their runtimes start only after both are posted); both report; the orchestrator's
// conversation is woken with both reports and closes its Case certified. The tree shows
// who asked whom. Another orchestrator's ask outside the classes waits for a member, and
// cancelling its task cancels the task it asked for.
func TestAsk_OrchestratorAsksTwoAgents(t *testing.T) {
	r := newPolicyRig(t, askPolicyText)
	capability, err := filepath.Abs(filepath.Join("testdata", "ask"))
	if err != nil {
		t.Fatal(err)
	}
	r.exec(t, exitOK, nil, "capability", "install", capability)

	bossID, bossTok := r.agent(t, "boss", "--kind", "orchestrator")
	_, writerTok := r.agent(t, "writer")
	_, criticTok := r.agent(t, "critic")
	r.agentServe(t, bossTok, r.script(t, `{"turns":[
		{"calls":[{"tool":"ApplyAction","arguments":{"action":"propose","params":{"topic":"q3"}}},
			{"as":"open","tool":"OpenCase","arguments":{"caseType":"brief","businessKey":{"topic":"q3"}}}]},
		{"calls":[`+askCall("writer", "Draft the q3 brief.")+`,`+askCall("critic", "Review the q3 brief.")+`]},
		{"calls":[{"tool":"ApplyAction","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"action":"finish","params":{"topic":"q3"}}},
			{"tool":"CloseCase","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"disposition":"completed"}}]},
		{"final":"both parts are in"}]}`))
	posted := r.postTask(t, "--agent", "boss", "Write the q3 brief with writer and critic.")

	// Both asks run at once: the asked tasks are both queued, and the orchestrator's task
	// waits on both of its asks, before either Agent's runtime starts.
	draft := r.askedUntil(t, "writer", posted.ID)
	review := r.askedUntil(t, "critic", posted.ID)
	waiting := r.taskUntil(t, posted.ID, contract.TaskWaiting)
	if len(waiting.Waiting) != 2 {
		t.Fatalf("the orchestrator's task waits on %+v, want its two asks", waiting.Waiting)
	}
	for _, a := range []contract.Task{draft, review} {
		if a.State != contract.TaskQueued || a.Parent.Agent != contract.AgentID(bossID) || a.Parent.Depth != 1 || a.PostedBy != contract.Principal("agent:"+bossID) {
			t.Fatalf("asked task = %+v (parent %+v), want it queued, posted by boss at depth 1", a, a.Parent)
		}
	}
	r.agentServe(t, writerTok, r.script(t, `{"turns":[{"final":"writer: the draft is done"}]}`))
	r.agentServe(t, criticTok, r.script(t, `{"turns":[{"final":"critic: the review is done"}]}`))

	done := r.taskUntil(t, posted.ID, contract.TaskCompleted)
	if res := done.Result; !strings.HasSuffix(res.Final, "both parts are in") || len(res.ClosedCases) != 1 || res.ClosedCases[0].Disposition != contract.DispositionCompleted {
		t.Fatalf("the orchestrator's result = %+v, want its Case closed completed", res)
	}
	if out, _ := r.exec(t, exitOK, nil, "case", "list"); !strings.Contains(out, "closed\tcompleted") {
		t.Errorf("docket case list = %q, want the brief closed as completed (certified)", out)
	}
	text := r.conversationText(t, bossID, string(posted.Conversation))
	for _, want := range []string{"writer: the draft is done", "critic: the review is done", string(draft.ID), string(review.ID)} {
		if !strings.Contains(text, want) {
			t.Errorf("the orchestrator's conversation reads\n%s\nwant %q: it is woken with both reports", text, want)
		}
	}

	// The tree: the orchestrator's task with its two asked tasks, completed.
	var tree contract.TaskNode
	js, _ := r.exec(t, exitOK, nil, "task", "tree", string(review.ID), "-o", "json")
	if err := json.Unmarshal([]byte(js), &tree); err != nil {
		t.Fatalf("docket task tree printed %q: %v", js, err)
	}
	if tree.Task.ID != posted.ID || len(tree.Children) != 2 || tree.Children[0].Task.State != contract.TaskCompleted || tree.Children[1].Task.State != contract.TaskCompleted {
		t.Fatalf("tree = %+v, want the orchestrator's task over its two completed asks", tree)
	}
	if out, _ := r.exec(t, exitOK, nil, "task", "tree", string(posted.ID)); !strings.Contains(out, "  "+string(draft.ID)+"\twriter\tcompleted") {
		t.Errorf("docket task tree printed\n%s\nwant writer's task under the orchestrator's", out)
	}

	t.Run("an ask outside the classes waits for a member; a cancel cascades", func(t *testing.T) {
		_, tok := r.agent(t, "lead", "--kind", "orchestrator")
		r.agent(t, "idle")
		r.agent(t, "auditor")
		r.agentServe(t, tok, r.script(t, `{"turns":[{"calls":[`+askCall("idle", "Wait here.")+`,`+askCall("auditor", "Audit the q3 brief.")+`]},{"final":"must not be reached"}]}`))
		asking := r.postTask(t, "--agent", "lead", "Get the brief audited.")
		idle := r.askedUntil(t, "idle", asking.ID)
		req := r.pendingRequest(t)
		if req.Vector.Action != contract.ActionAsk || req.Vector.Args["agent"].Str() != "auditor" || req.Vector.Args["from"].Str() != string(asking.ID) {
			t.Fatalf("pending request = %+v, want lead's ask of auditor", req.Vector)
		}
		if ts := r.tasksOf(t, "auditor"); len(ts) != 0 {
			t.Fatalf("auditor has tasks %+v before a member decided", ts)
		}
		r.taskUntil(t, asking.ID, contract.TaskWaiting)

		r.exec(t, exitOK, nil, "task", "cancel", string(asking.ID))
		if got := r.taskUntil(t, idle.ID, contract.TaskCancelled); got.Cancel == nil {
			t.Errorf("idle's task = %+v, want it cancelled with the task that asked for it", got)
		}
		// The ask that waits for a member still does; denying it lets the task end.
		r.exec(t, exitOK, nil, "decide", string(req.ID), "deny", "--digest", req.Digest, "--reason", "not now")
		ended := r.taskUntil(t, asking.ID, contract.TaskCancelled)
		if ended.Result == nil || len(ended.Result.Operations) != 2 {
			t.Errorf("lead's cancelled task = %+v, want both asks named", ended.Result)
		}
		if ts := r.tasksOf(t, "auditor"); len(ts) != 0 {
			t.Errorf("auditor has tasks %+v after the denial", ts)
		}
	})
}
