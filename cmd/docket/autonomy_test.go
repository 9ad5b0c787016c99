package main

import (
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestAutonomy_AgainstServe: under an autonomy policy that starts Agents attended, an
// Agent's write outside a run window is refused outside_run_window, over the MCP gateway
// of a real docket serve; a member opens a window with docket agent window (the console's
// route) and the same write is admitted (issue 14).
func TestAutonomy_AgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docket serve and runtimes as processes")
	}
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
