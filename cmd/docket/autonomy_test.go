package main

import (
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// TestAutonomy_AgainstServe: under an autonomy policy that starts Agents attended, an
// Agent's write outside a run window is refused outside_run_window, over the MCP gateway
// of a real docket serve; a member opens a window with docket agent window (the console's
// route) and the same write is admitted.
func TestAutonomy_AgainstServe(t *testing.T) {
	r := newPolicyRig(t, "[autonomy_policy]\ndefault_level = \"attended\"\n")
	id, token := r.agent(t, "scribe")
	out, _ := r.exec(t, exitOK, nil, "agent", "autonomy", "scribe")
	if !strings.Contains(out, "agent scribe is attended (autonomy policy version 2)") {
		t.Errorf("docket agent autonomy printed %q", out)
	}
	write := func(conversation string) (code, content string) {
		t.Helper()
		js := `{"turns":[{"calls":[` + noteCall("docs/a.md") + `]},{"final":"done"}]}`
		r.execRun(t, "--token-file", token, "--script", r.script(t, js), "--hold-wait", "1ms", "--conversation", conversation, "task")
		res, _ := r.conversation(t, id, conversation)
		if len(res) != 1 {
			t.Fatalf("results = %+v, want one", res)
		}
		return resultCodes(t, res)[0], res[0].Content
	}
	if code, content := write("w-1"); code != string(contract.CodeOutsideRunWindow) || !strings.Contains(content, `"requestExecuted":false`) {
		t.Fatalf("a write outside a run window = %q %s, want outside_run_window, requestExecuted false", code, content)
	}
	out, _ = r.exec(t, exitOK, nil, "agent", "window", "scribe", "--minutes", "30")
	if !strings.Contains(out, "run window ") {
		t.Errorf("docket agent window printed %q", out)
	}
	if code, content := write("w-2"); code != "" {
		t.Fatalf("the same write inside the window = %q %s, want admitted", code, content)
	}
}

// TestAutonomy_ManualBoardActAgainstServe: a manual Agent's ApplyBatch, over the MCP
// gateway of a real docket serve, waits as a request (docket agent run exits pending and
// docket requests shows the call's vector); once a member approves it with docket decide,
// the batch is applied as the Agent's, and the same conversation's next run reads the
// outcome.
func TestAutonomy_ManualBoardActAgainstServe(t *testing.T) {
	r := newPolicyRig(t, "[autonomy_policy]\ndefault_level = \"manual\"\n")
	id, token := r.agent(t, "scribe")
	s := r.script(t, `{"turns":[{"calls":[`+assertSeen+`]},{"final":"asked"}]}`)
	r.exec(t, exitPending, nil, "agent", "run", "--token-file", token, "--script", s, "--hold-wait", "1ms", "--conversation", "m-1", "assert")
	var req contract.Request
	for _, q := range r.requests(t) {
		if q.State == contract.RequestPending {
			req = q
		}
	}
	if req.Vector.Call != contract.ToolApplyBatch || string(req.Vector.Agent) != id || !strings.Contains(string(req.Vector.Input), "calculation_note") {
		t.Fatalf("the pending request = %+v, want the Agent's ApplyBatch with its arguments", req)
	}
	if out, _ := r.exec(t, exitOK, nil, "requests"); !strings.Contains(out, `"call":"ApplyBatch"`) {
		t.Errorf("docket requests printed %q, want the call in the canonical vector", out)
	}
	if n := r.countEvents(t, event.BatchApplied, "agent:"+id); n != 0 {
		t.Fatalf("the batch was applied %d times before any decision", n)
	}
	r.exec(t, exitOK, nil, "decide", string(req.ID), "approve", "--digest", req.Digest)
	if n := r.countEvents(t, event.BatchApplied, "agent:"+id); n != 1 {
		t.Fatalf("after the approval the Agent's batch was applied %d times, want once", n)
	}
	s2 := r.script(t, `{"turns":[{"final":"read it"}]}`)
	r.exec(t, exitOK, nil, "agent", "run", "--token-file", token, "--script", s2, "--hold-wait", "1ms", "--conversation", "m-1", "go on")
	if text := r.conversationText(t, id, "m-1"); !strings.Contains(text, "outcomes you have not read") || !strings.Contains(text, `"state":"done"`) {
		t.Errorf("the conversation's messages hold %q, want the approved batch's outcome", text)
	}
}
