package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// TestTask_StalledModel: a model server that accepts the connection and never answers,
// or sends the headers of its answer and then stalls, cannot hold a task. While the turn
// waits, the runtime's lease renewals name the wait on the task, in docket task show,
// docket ops and docket doctor; at the configured deadline the task fails with
// model_stalled, naming the wait, and no renewal follows (docs/workbench.md, Model
// deadlines).
func TestTask_StalledModel(t *testing.T) {
	r := newDocketRig(t) // serve's task lease is 3s: the runtime renews about every second
	tests := []struct {
		name  string
		model func(testing.TB) string
		phase string
		says  string
	}{
		{"accepts and never answers", providertest.Silent, contract.RunWaitFirstByte, "sent no first byte within 4s"},
		{"sends headers then stalls", providertest.Stalling, contract.RunWaitIdle, "sent nothing for 4s"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := tt.model(t)
			name := "stalled-" + string(rune('a'+i))
			id, tok := r.agent(t, name)
			srv := r.command(t, nil, "agent", "serve", "--token-file", tok, "--provider", "openai", "--model-url", model, "--model", "m",
				"--model-first-byte", "4s", "--model-idle", "4s", "--model-attempts", "2", "--listen", "127.0.0.1:0")
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
			posted := r.postTask(t, "--agent", name, "say hello")

			// While the turn waits, the wait is named on the task.
			var waiting contract.Task
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				waiting = contract.Task{}
				js, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID), "-o", "json")
				if err := json.Unmarshal([]byte(js), &waiting); err != nil {
					t.Fatalf("docket task show printed %q: %v", js, err)
				}
				if w := waiting.RunWait; w != nil && w.Phase == tt.phase {
					break
				}
				if waiting.State.Finished() || time.Now().After(deadline) {
					t.Fatalf("task %s = %+v, want it claimed with its run waiting on the model (%s)", posted.ID, waiting, tt.phase)
				}
			}
			if w := waiting.RunWait; w.On != contract.RunWaitModel || w.Origin != model || !w.Deadline.After(w.Since) {
				t.Errorf("the task's run wait = %+v, want the model at %s with its deadline", w, model)
			}
			line := regexp.QuoteMeta("task "+string(posted.ID)+" of agent "+id+": ") + `(its run waits on the model|stuck: its run waited on the model) at ` + regexp.QuoteMeta(model)
			if ops, _ := r.exec(t, exitOK, nil, "ops"); !regexp.MustCompile(line).MatchString(ops) {
				t.Errorf("docket ops =\n%s\nwant the task's wait on the model at %s", ops, model)
			}
			doctor := r.command(t, nil, "doctor")
			dout, _ := doctor.Output()
			if !regexp.MustCompile(`(warn|FAIL) task +` + regexp.QuoteMeta(string(posted.ID)+" of agent "+id+": ") + `.*on the model at ` + regexp.QuoteMeta(model)).Match(dout) {
				t.Errorf("docket doctor =\n%s\nwant a line naming the task's wait on the model at %s", dout, model)
			}

			// At the deadline the request is sent again after a back-off, and the task
			// says so: what failed, which attempt comes, of how many. The back-off is at
			// most a second, so the task is read over the API from this process, what
			// docket task show -o json reads, not by starting a docket process each time:
			// on a loaded machine one start can outlast the whole back-off.
			member := r.memberClient(t)
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				waiting = contract.Task{}
				if err := member.do(t.Context(), http.MethodGet, projectPath("default", "tasks", string(posted.ID)), nil, &waiting); err != nil {
					t.Fatalf("read task %s: %v", posted.ID, err)
				}
				w := waiting.RunWait
				if w != nil && w.Phase == contract.RunWaitRetry {
					if w.Attempt != 2 || w.Attempts != 2 || w.Reason != "model stalled" || w.Origin != model {
						t.Errorf("the task's retry wait = %+v, want attempt 2 of 2 after the model stalled at %s", w, model)
					}
					break
				}
				if waiting.State.Finished() || time.Now().After(deadline) {
					t.Fatalf("task %s = %+v, want its run seen waiting to retry", posted.ID, waiting)
				}
			}
			if text, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID)); !strings.Contains(text, "model stalled, attempt 2 of 2 at "+model+", next in ") {
				t.Logf("docket task show (the retry may have begun) =\n%s", text)
			}

			// At the second deadline the task fails, naming the wait and the attempts; its
			// claim is let go.
			r.taskUntil(t, posted.ID, contract.TaskFailed)
			var failed contract.Task // read afresh: a field left out of the JSON must read as absent
			js, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID), "-o", "json")
			if err := json.Unmarshal([]byte(js), &failed); err != nil {
				t.Fatalf("docket task show printed %q: %v", js, err)
			}
			if res := failed.Result; res == nil || res.ErrorCode != contract.CodeModelStalled || !strings.Contains(res.Teaching, tt.says) || !strings.Contains(res.Teaching, model) ||
				!strings.Contains(res.Teaching, "gave up after 2 attempts") {
				t.Errorf("the failed task's result = %+v, want model_stalled naming the model at %s and %q", res, model, tt.says)
			}
			if failed.RunWait != nil || failed.LeaseUntil != nil {
				t.Errorf("the failed task still shows a run wait %+v or a lease %v", failed.RunWait, failed.LeaseUntil)
			}
			if text, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID)); !strings.Contains(text, "model_stalled: ") ||
				!regexp.MustCompile(`model turn 1 failed at \S+ with model_stalled after 2 attempt\(s\) at openai-compatible m at \S+: model stalled, waited [0-9.]+ s; model stalled, gave up`).MatchString(text) {
				t.Errorf("docket task show =\n%s\nwant the failure named, and each attempt of the turn that gave up", text)
			}
			// The conversation keeps each attempt, structured, as a retried turn keeps its retries.
			_, state := r.conversation(t, id, string(failed.Conversation))
			var turns []agent.FailedTurn
			if err := json.Unmarshal(state["failed"], &turns); err != nil || len(turns) != 1 || len(turns[0].Attempts) != 2 ||
				turns[0].Attempts[0].Kind != agent.KindStalled || turns[0].Attempts[0].WaitMS <= 0 || turns[0].Attempts[1].Attempt != 2 || turns[0].Code != contract.CodeModelStalled {
				t.Errorf("the conversation's failed turns = %s (%v), want the turn with its two stalled attempts and the wait between", state["failed"], err)
			}

			// The log holds the renewals that named the wait, and none after the report.
			events, _ := r.exec(t, exitOK, nil, "events", "tail", "--type", event.TaskClaimed+","+event.TaskReported, "-o", "json")
			var named, reported bool
			for l := range strings.Lines(events) {
				var ev contract.Event
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("events tail printed %q: %v", l, err)
				}
				p, err := event.Decode(ev.Type, ev.Data)
				if err != nil {
					t.Fatalf("event %d: %v", ev.Seq, err)
				}
				var d event.TaskClaimedData
				switch p := p.(type) {
				case event.TaskClaimedData:
					d = p
				case event.TaskReportedData:
					d.Task = p.Task
				}
				if d.Task != posted.ID {
					continue
				}
				switch {
				case ev.Type == event.TaskReported:
					reported = true
				case reported:
					t.Errorf("event %d renews the task's claim after its run was reported", ev.Seq)
				case d.Wait != nil && d.Wait.Origin == model:
					named = true
				}
			}
			if !named || !reported {
				t.Errorf("the log names the wait in a renewal: %v, reports the run: %v; want both", named, reported)
			}
		})
	}
}
