package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// pendingRequest waits for the one pending request and returns it.
func (r *docketRig) pendingRequest(t *testing.T) contract.Request {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, q := range r.requests(t) {
			if q.State == contract.RequestPending {
				return q
			}
		}
	}
	t.Fatal("no request became pending")
	return contract.Request{}
}

// TestAgentRun_WaitsAndResumes: docket agent run --wait keeps a conversation whose write
// waits for a decision, and resumes it by itself once a member decides; a runtime
// SIGKILLed while it waited resumes from the authority, and nothing is sent twice.
func TestAgentRun_WaitsAndResumes(t *testing.T) {
	r := newPolicyRig(t, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs notes\"\naction = \"note\"\npath = \"docs/*\"\n")
	// The scripted model ends its turn while the note waits for the decision, and plays
	// the script's next turn once the wake shows the outcome.
	script := r.script(t, `{"turns":[{"calls":[`+noteCall("docs/a.md")+`]},{"final":"woke with the outcome"}]}`)

	t.Run("the decision wakes the run", func(t *testing.T) {
		id, tok := r.agent(t, "waiter")
		run := r.command(t, nil, "agent", "run", "--token-file", tok, "--script", script, "--hold-wait", "1ms", "--wait", "60s", "--conversation", "w-1", "note")
		var out syncBuffer
		run.Stdout = &out
		stderr := startLines(t, run, run.StderrPipe)
		waitLine(t, stderr, "waiting up to")
		req := r.pendingRequest(t)
		r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
		drain(stderr)
		if code := exitOf(run.Wait()); code != exitOK || !strings.Contains(out.String(), "woke with the outcome") {
			t.Fatalf("the waiting run exited %d with %q; want 0 and the final answer after the wake", code, out.String())
		}
		if n := r.countEvents(t, event.OpAdmitted, "agent:"+id); n != 1 {
			t.Errorf("the authority admitted %d operations, want 1", n)
		}
	})

	t.Run("a runtime killed while waiting resumes from the authority", func(t *testing.T) {
		id, tok := r.agent(t, "killed")
		run := r.command(t, nil, "agent", "run", "--token-file", tok, "--script", script, "--hold-wait", "1ms", "--wait", "60s", "--conversation", "w-2", "note")
		stderr := startLines(t, run, run.StderrPipe)
		waitLine(t, stderr, "waiting up to")
		if err := run.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		drain(stderr)
		run.Wait()
		req := r.pendingRequest(t)
		r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
		// Resumed without a task, the conversation shows the outcome it watched.
		out, _ := r.exec(t, exitOK, nil, "agent", "run", "--token-file", tok, "--script", script, "--wait", "60s", "--conversation", "w-2", "go on")
		if !strings.Contains(out, "woke with the outcome") {
			t.Errorf("the resumed run printed %q, want the final answer", out)
		}
		if n := r.countEvents(t, event.OpAdmitted, "agent:"+id); n != 1 {
			t.Errorf("the authority admitted %d operations, want 1: nothing is sent twice", n)
		}
		if n := r.countEvents(t, event.ActionApplied, "agent:"+id); n != 1 {
			t.Errorf("the note ran %d times, want once", n)
		}
	})
}

// TestAgentServe_WakesAConversation: a /task whose write waits for a decision answers
// with it pending, and docket agent serve resumes the conversation by itself once a
// member decides.
func TestAgentServe_WakesAConversation(t *testing.T) {
	r := newPolicyRig(t, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs notes\"\naction = \"note\"\npath = \"docs/*\"\n")
	id, tok := r.agent(t, "served")
	script := r.script(t, `{"turns":[{"calls":[`+noteCall("docs/a.md")+`]},{"final":"woke with the outcome"}]}`)
	post := r.serveTasks(t, tok, script)
	a := post(`{"text":"note","sessionKey":"k"}`)
	if len(a.Pending) != 1 {
		t.Fatalf("POST /task = %+v, want the note pending", a)
	}
	req := r.pendingRequest(t)
	r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
	cl, err := newClient(&env{Getenv: func(k string) string {
		if k == "DOCKET_HOME" {
			return r.home
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var c contract.Conversation
		if err := cl.do(t.Context(), http.MethodGet, "/api/v1/projects/default/agents/"+id+"/conversations/"+a.Conversation, nil, &c); err != nil {
			t.Fatal(err)
		}
		if n := len(c.Messages); n > 0 && strings.Contains(string(c.Messages[n-1]), "woke with the outcome") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the conversation was not woken: %d messages, state %s", len(c.Messages), c.State)
		}
	}
	if n := r.countEvents(t, event.OpAdmitted, "agent:"+id); n != 1 {
		t.Errorf("the authority admitted %d operations, want 1", n)
	}
}
