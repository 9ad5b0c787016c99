package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// TestTask_CancelWhileTheModelStreams: docket task cancel stops a task whose model
// answer streams and then holds back the rest (deadlines far off, so only the cancel can
// end it): the runtime learns of the cancel from its held lease renewal, aborts the
// request and reports the task cancelled; no renewal follows the report.
func TestTask_CancelWhileTheModelStreams(t *testing.T) {
	r := newDocketRig(t)
	model := providertest.Stalling(t)
	_, tok := r.agent(t, "streamer")
	srv := r.command(t, nil, "agent", "serve", "--token-file", tok, "--provider", "openai", "--model-url", model, "--model", "m",
		"--model-first-byte", "10m", "--model-idle", "10m", "--listen", "127.0.0.1:0")
	var out syncBuffer
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("docket agent serve:\n%s", out.String())
		}
	})
	posted := r.postTask(t, "--agent", "streamer", "say hello")

	// The answer has begun and waits for the rest: the run is mid-stream.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var task contract.Task
		js, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID), "-o", "json")
		if err := json.Unmarshal([]byte(js), &task); err != nil {
			t.Fatalf("docket task show printed %q: %v", js, err)
		}
		if w := task.RunWait; w != nil && w.Phase == contract.RunWaitIdle {
			break
		}
		if task.State.Finished() || time.Now().After(deadline) {
			t.Fatalf("task %s = %+v, want its run streaming the model's answer", posted.ID, task)
		}
	}
	said, _ := r.exec(t, exitOK, nil, "task", "cancel", string(posted.ID))
	if !strings.Contains(said, "cancel asked by member:") && !strings.Contains(said, "cancelled by member:") {
		t.Errorf("docket task cancel printed\n%s\nwant who asked for the cancel", said)
	}
	done := r.taskUntil(t, posted.ID, contract.TaskCancelled)
	if res := done.Result; res == nil || !strings.Contains(res.Teaching, "no further model request or tool call") || len(res.Operations) != 0 {
		t.Errorf("the cancelled task's result = %+v, want the cancel named and no Operation", res)
	}
	if text, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID)); !strings.Contains(text, ": cancelled") || !strings.Contains(text, "cancelled by member:") {
		t.Errorf("docket task show =\n%s\nwant it cancelled, and by whom", text)
	}
	if _, stderr := r.exec(t, exitFailure, nil, "task", "cancel", "t-0000000000000000"); !strings.Contains(stderr, "not_found") {
		t.Errorf("cancel of no task: stderr %q, want not_found", stderr)
	}

	// The log holds the cancel, then the report, and no renewal after it.
	events, _ := r.exec(t, exitOK, nil, "events", "tail", "--type", event.TaskClaimed+","+event.TaskCancelRequested+","+event.TaskReported, "-o", "json")
	var asked, reported bool
	for l := range strings.Lines(events) {
		var ev contract.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("events tail printed %q: %v", l, err)
		}
		p, err := event.Decode(ev.Type, ev.Data)
		if err != nil {
			t.Fatalf("event %d: %v", ev.Seq, err)
		}
		switch p := p.(type) {
		case event.TaskCancelRequestedData:
			asked = asked || p.Task == posted.ID
		case event.TaskReportedData:
			if p.Task == posted.ID {
				reported = asked && p.State == contract.TaskCancelled
			}
		case event.TaskClaimedData:
			if p.Task == posted.ID && reported {
				t.Errorf("event %d renews the task's claim after its run was reported", ev.Seq)
			}
		}
	}
	if !asked || !reported {
		t.Errorf("the log holds the cancel: %v, then the cancelled report: %v; want both", asked, reported)
	}
}

// TestTask_CancelWhileAWriteWaitsForAPerson: a task whose write waits for a decision is
// cancelled; the write is not: it still waits, a member approves it, and it runs once.
// The decision wakes the task, and the runtime, asking its model nothing more, reports it
// cancelled, naming the write it admitted; the conversation keeps the write's outcome.
func TestTask_CancelWhileAWriteWaitsForAPerson(t *testing.T) {
	r := newPolicyRig(t, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs notes\"\naction = \"note\"\npath = \"docs/*\"\n")
	script := r.script(t, `{"turns":[{"calls":[`+noteCall("docs/a.md")+`]},{"final":"must not be reached"}]}`)
	id, tok := r.agent(t, "cancelled")
	r.agentServe(t, tok, script)
	posted := r.postTask(t, "--agent", "cancelled", "note docs/a.md")
	waiting := r.taskUntil(t, posted.ID, contract.TaskWaiting)
	if len(waiting.Waiting) != 1 || waiting.Waiting[0].Ordinal == 0 {
		t.Fatalf("the waiting task = %+v, want it to wait on the note", waiting)
	}
	var asked contract.Task
	js, _ := r.exec(t, exitOK, nil, "task", "cancel", string(posted.ID), "-o", "json")
	if err := json.Unmarshal([]byte(js), &asked); err != nil {
		t.Fatalf("docket task cancel printed %q: %v", js, err)
	}
	if asked.State != contract.TaskWaiting || asked.Cancel == nil {
		t.Fatalf("the cancel of a waiting task = %+v, want it waiting with the cancel asked", asked)
	}
	req := r.pendingRequest(t)
	r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
	done := r.taskUntil(t, posted.ID, contract.TaskCancelled)
	if res := done.Result; res == nil || len(res.Operations) != 1 || res.Operations[0].Ordinal != waiting.Waiting[0].Ordinal || res.Operations[0].Tool != contract.ToolApplyAction {
		t.Fatalf("the cancelled task's result = %+v, want the note it admitted", done.Result)
	}
	if strings.Contains(done.Result.Final, "must not be reached") {
		t.Errorf("the model was asked again after the cancel: final %q", done.Result.Final)
	}
	if n := r.countEvents(t, event.ActionApplied, "agent:"+id); n != 1 {
		t.Errorf("the note ran %d times, want once: the approved write runs, the cancel cancels no Operation", n)
	}
	if text := r.conversationText(t, id, string(posted.Conversation)); !strings.Contains(text, "cancelled this task") {
		t.Errorf("the conversation reads\n%s\nwant where the task was cancelled", text)
	}
	if text, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID)); !strings.Contains(text, "admitted ApplyAction call ") {
		t.Errorf("docket task show =\n%s\nwant the admitted write listed", text)
	}
}
