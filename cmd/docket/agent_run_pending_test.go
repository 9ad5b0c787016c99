package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// execRun runs docket agent run and fails unless it exits 0 or exitPending: a run whose
// writes wait for a decision is pending, not failed.
func (r *docketRig) execRun(t *testing.T, args ...string) {
	t.Helper()
	cmd := r.command(t, nil, append([]string{"agent", "run"}, args...)...)
	out, err := cmd.CombinedOutput()
	if code := exitOf(err); code != exitOK && code != exitPending {
		t.Fatalf("docket agent run %s: exit %d, want %d or %d\n%s", strings.Join(args, " "), code, exitOK, exitPending, out)
	}
}

// TestAgentRun_PendingAndTheNextRun: a run whose write waits for a decision exits
// exitPending and says so in -o json; once a member approves, the next run of the same
// Agent, in a new conversation, is not refused for the outcome the first left unread.
func TestAgentRun_PendingAndTheNextRun(t *testing.T) {
	r := newPolicyRig(t, "[delegation_policy]\n[[delegation_policy.class]]\nname = \"docs notes\"\naction = \"note\"\npath = \"docs/*\"\n")
	id, tok := r.agent(t, "scribe")

	s := r.script(t, `{"turns":[{"calls":[`+noteCall("docs/a.md")+`]},{"final":"asked"}]}`)
	out, _ := r.exec(t, exitPending, nil, "agent", "run", "--token-file", tok, "--script", s, "--hold-wait", "1ms", "--conversation", "p-1", "-o", "json", "note docs/a.md")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var events []runner.Event
	for _, l := range lines {
		var ev runner.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("-o json printed %q, not one event a line: %v", l, err)
		}
		events = append(events, ev)
	}
	if len(events) != 2 || events[0].Event != "tool" || events[0].Tool != "ApplyAction" || events[1].Event != "end" || events[1].State != "pending" || len(events[1].Pending) != 1 {
		t.Fatalf("-o json events = %+v, want the tool call, then a pending end", events)
	}

	var req contract.Request
	for _, q := range r.requests(t) {
		if q.State == contract.RequestPending {
			req = q
		}
	}
	if req.ID == "" {
		t.Fatal("the note made no pending request")
	}
	r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
	for deadline := time.Now().Add(20 * time.Second); r.countEvents(t, event.ActionApplied, "agent:"+id) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the approved note never ran")
		}
	}

	// The outcome of the note is unread: no run of the Agent read it.
	s2 := r.script(t, `{"turns":[{"calls":[`+assertSeen+`]},{"final":"noted"}]}`)
	out, stderr := r.exec(t, exitOK, nil, "agent", "run", "--token-file", tok, "--script", s2, "--hold-wait", "1ms", "--conversation", "p-2", "assert")
	if !strings.Contains(out, "noted") {
		t.Errorf("stdout %q, want the final answer", out)
	}
	res, _ := r.conversation(t, id, "p-2")
	if diff := cmp.Diff([]string{""}, resultCodes(t, res)); diff != "" {
		t.Errorf("codes the second run's model read (-want +got):\n%s\nstderr:\n%s", diff, stderr)
	}
}
