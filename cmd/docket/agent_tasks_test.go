package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// postTask posts a task with docket task post and returns it.
func (r *docketRig) postTask(t *testing.T, args ...string) contract.Task {
	t.Helper()
	out, _ := r.exec(t, exitOK, nil, append([]string{"task", "post", "-o", "json"}, args...)...)
	var task contract.Task
	if err := json.Unmarshal([]byte(out), &task); err != nil {
		t.Fatalf("docket task post printed %q: %v", out, err)
	}
	return task
}

// taskUntil reads task id with docket task show until it is in state want, and returns
// it.
func (r *docketRig) taskUntil(t *testing.T, id contract.TaskID, want contract.TaskState) contract.Task {
	t.Helper()
	var task contract.Task
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := r.exec(t, exitOK, nil, "task", "show", string(id), "-o", "json")
		if err := json.Unmarshal([]byte(out), &task); err != nil {
			t.Fatalf("docket task show printed %q: %v", out, err)
		}
		if task.State == want {
			return task
		}
		if task.State.Finished() || time.Now().After(deadline) {
			t.Fatalf("task %s is %s (%+v), want %s", id, task.State, task.Result, want)
		}
	}
}

// TestTask_MemberPostsRuntimeRuns: a member posts a task with docket task post; docket
// agent serve, long-polling the authority, takes it and runs it to a closed Case; the
// task's result lists the Case with its root and disposition. POST /task, its thin
// client, checks its key and body and answers with the reported task.
func TestTask_MemberPostsRuntimeRuns(t *testing.T) {
	r := newDocketRig(t)
	_, tok := r.agent(t, "taker")
	script := r.script(t, `{"turns":[
		{"calls":[{"as":"open","tool":"OpenCase","arguments":{"caseType":"exploration","businessKey":{"topic":"t"}}}]},
		{"calls":[{"tool":"CloseCase","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"disposition":"abandoned","reason":"only looking"}}]},
		{"final":"closed"}]}`)
	ep := r.agentServe(t, tok, script)

	posted := r.postTask(t, "--agent", "taker", "--client-key", "k-1", "look around")
	if again := r.postTask(t, "--agent", "taker", "--client-key", "k-1", "look around"); again.ID != posted.ID {
		t.Errorf("the same client key posted %s after %s, want the same task", again.ID, posted.ID)
	}
	done := r.taskUntil(t, posted.ID, contract.TaskCompleted)
	if done.Result == nil || !strings.HasSuffix(done.Result.Final, "closed") || len(done.Result.ClosedCases) != 1 {
		t.Fatalf("the task's result = %+v, want the final answer and one closed Case", done.Result)
	}
	if cc := done.Result.ClosedCases[0]; cc.CaseID == "" || cc.Root == "" || cc.Disposition != contract.DispositionAbandoned {
		t.Errorf("closed Case = %+v, want its id, root and disposition abandoned", cc)
	}
	out, _ := r.exec(t, exitOK, nil, "task", "list")
	if !strings.Contains(out, string(posted.ID)) || !strings.Contains(out, "completed") {
		t.Errorf("docket task list printed %q, want the task completed", out)
	}

	if status, _ := ep.post(t, "wrong", `{"text":"x"}`); status != http.StatusUnauthorized {
		t.Errorf("a wrong key got %d, want 401", status)
	}
	if status, a := ep.post(t, ep.key, `{"text":"x","shell":"ls"}`); status != http.StatusBadRequest || a.ErrorCode != contract.CodeInvalidArgument {
		t.Errorf("an unknown field got %d %+v, want 400 invalid_argument", status, a)
	}
	status, a := ep.post(t, ep.key, `{"text":"again","sessionKey":"sess-9"}`)
	if status != http.StatusOK || a.SessionKey != "sess-9" || !strings.HasSuffix(a.Final, "closed") || a.State != contract.TaskCompleted || a.Task == "" || len(a.ClosedCases) != 1 {
		t.Errorf("POST /task = %d %+v; want the sessionKey echoed, the task completed with its final answer and its closed Case", status, a)
	}
}

// TestTask_Wakes: a task whose write waits for a decision is reported waiting; the
// member's approval wakes the conversation through the runtime's long-poll, and the task
// completes with nothing sent twice. A runtime SIGKILLed while its task waits loses
// nothing: a new one takes the wake from the authority.
func TestTask_Wakes(t *testing.T) {
	r := newPolicyRig(t, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs notes\"\naction = \"note\"\npath = \"docs/*\"\n")
	script := r.script(t, `{"turns":[{"calls":[`+noteCall("docs/a.md")+`]},{"final":"woke with the outcome"}]}`)
	approve := func(t *testing.T) {
		t.Helper()
		req := r.pendingRequest(t)
		r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
	}
	once := func(t *testing.T, id string) {
		t.Helper()
		if n := r.countEvents(t, event.OpAdmitted, "agent:"+id); n != 1 {
			t.Errorf("the authority admitted %d operations, want 1: nothing is sent twice", n)
		}
		if n := r.countEvents(t, event.ActionApplied, "agent:"+id); n != 1 {
			t.Errorf("the note ran %d times, want once", n)
		}
	}

	t.Run("an approval wakes the conversation", func(t *testing.T) {
		id, tok := r.agent(t, "woken")
		r.agentServe(t, tok, script)
		posted := r.postTask(t, "--agent", "woken", "note docs/a.md")
		waiting := r.taskUntil(t, posted.ID, contract.TaskWaiting)
		if len(waiting.Waiting) != 1 || waiting.Waiting[0].Tool != contract.ToolApplyAction {
			t.Fatalf("the waiting task = %+v, want it to wait on the note", waiting)
		}
		approve(t)
		done := r.taskUntil(t, posted.ID, contract.TaskCompleted)
		if !strings.HasSuffix(done.Result.Final, "woke with the outcome") {
			t.Errorf("final = %q, want the answer after the wake", done.Result.Final)
		}
		once(t, id)
	})

	t.Run("a runtime killed while waiting resumes from the authority", func(t *testing.T) {
		id, tok := r.agent(t, "killed")
		first := r.agentServe(t, tok, script)
		posted := r.postTask(t, "--agent", "killed", "note docs/a.md")
		r.taskUntil(t, posted.ID, contract.TaskWaiting)
		if err := first.proc.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		approve(t)
		r.agentServe(t, tok, script)
		done := r.taskUntil(t, posted.ID, contract.TaskCompleted)
		if !strings.HasSuffix(done.Result.Final, "woke with the outcome") {
			t.Errorf("final = %q, want the answer after the wake", done.Result.Final)
		}
		once(t, id)
		res, _ := r.conversation(t, id, string(posted.Conversation))
		if len(res) != 1 {
			t.Errorf("the conversation holds %d tool results, want the note's one", len(res))
		}
	})

	t.Run("two runs in a row of the same Agent both succeed", func(t *testing.T) {
		_, tok := r.agent(t, "twice")
		s := r.script(t, `{"turns":[{"calls":[`+assertSeen+`]},{"final":"noted"}]}`)
		for _, conv := range []string{"r-1", "r-2"} {
			out, _ := r.exec(t, exitOK, nil, "agent", "run", "--token-file", tok, "--script", s, "--conversation", conv, "assert")
			if !strings.Contains(out, "noted") {
				t.Errorf("run %s printed %q, want the final answer", conv, out)
			}
		}
	})
}

// TestTask_KilledMidRunIsTakenAgain: a runtime SIGKILLed while its task's write is in
// flight stops renewing its claim; once the lease runs out the next runtime takes the task
// again (attempt 2), resumes the conversation from the authority and sends nothing twice —
// the write it cannot know the outcome of is watched, not re-sent.
func TestTask_KilledMidRunIsTakenAgain(t *testing.T) {
	r := newDocketRig(t) // no worker: the write stays running
	id, tok := r.agent(t, "midrun")
	script := r.script(t, `{"turns":[{"calls":[`+loadInput+`]},{"final":"resumed"}]}`)
	first := r.agentServe(t, tok, script, "--hold-wait", "10m")
	posted := r.postTask(t, "--agent", "midrun", "load the input")
	for deadline := time.Now().Add(30 * time.Second); r.countEvents(t, event.OpAdmitted, "agent:"+id) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the runtime never sent its write")
		}
	}
	if err := first.proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.agentServe(t, tok, script, "--hold-wait", "1ms")
	again := r.taskUntil(t, posted.ID, contract.TaskWaiting)
	if again.Attempt != 2 || len(again.Waiting) != 1 || again.Waiting[0].Tool != contract.ToolApplyAction {
		t.Errorf("the task taken again = attempt %d waiting on %+v, want attempt 2 watching the write", again.Attempt, again.Waiting)
	}
	if n := r.countEvents(t, event.OpAdmitted, "agent:"+id); n != 1 {
		t.Errorf("the authority admitted %d operations, want 1: the write is never sent twice", n)
	}
	res, _ := r.conversation(t, id, string(posted.Conversation))
	if diff := cmp.Diff([]string{string(contract.CodeOutcomeUnknown)}, resultCodes(t, res)); diff != "" {
		t.Errorf("the results the model read (-want +got):\n%s", diff)
	}
}
