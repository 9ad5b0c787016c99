package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

const hookScript = `{"turns":[{"calls":[{"tool":"QueryBoard"},{"tool":"ApplyBatch","arguments":{}},{"tool":"OpenCase","arguments":{}}]},{"final":"ok"}]}`

func TestLoop_Hook(t *testing.T) {
	tests := []struct {
		name  string
		hook  agent.HookFuncs
		sent  []string
		codes []string
	}{
		{
			name:  "no refusal",
			hook:  agent.HookFuncs{},
			sent:  []string{"QueryBoard", "ApplyBatch", "OpenCase"},
			codes: []string{"", "", ""},
		},
		{
			name: "a refusal keeps one call local and the turn goes on",
			hook: agent.HookFuncs{Before: func(_ context.Context, _ string, c agent.ToolCall) (string, error) {
				if c.Name == "ApplyBatch" {
					return "batches need a ticket", nil
				}
				return "", nil
			}},
			sent:  []string{"QueryBoard", "OpenCase"},
			codes: []string{"", string(contract.CodeHookRefused), ""},
		},
		{
			name: "a failing hook refuses",
			hook: agent.HookFuncs{Before: func(context.Context, string, agent.ToolCall) (string, error) {
				return "", errors.New("policy server down")
			}},
			sent:  nil,
			codes: []string{string(contract.CodeHookRefused), string(contract.CodeHookRefused), string(contract.CodeHookRefused)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			var after []string
			h := tt.hook
			h.After = func(_ context.Context, conv string, c agent.ToolCall, res agent.ToolResult) error {
				after = append(after, conv+"/"+c.Name)
				return errors.New("post hooks cannot fail a call")
			}
			if _, err := r.loop(t, script(t, hookScript), func(c *agent.LoopConfig) { c.Hook = h }).Send(t.Context(), "c1", "go"); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if diff := cmp.Diff(tt.sent, tools(r.gw.Calls())); diff != "" {
				t.Errorf("calls sent (-want +got):\n%s", diff)
			}
			var got []string
			for _, res := range results(t, r.store, "c1") {
				code, _, _ := head(t, res)
				got = append(got, string(code))
				if code == contract.CodeHookRefused && !strings.Contains(res.Content, "not sent") {
					t.Errorf("refusal %s does not say the call was not sent", res.Content)
				}
			}
			if diff := cmp.Diff(tt.codes, got); diff != "" {
				t.Errorf("codes the model read (-want +got):\n%s", diff)
			}
			var wantAfter []string
			for _, s := range tt.sent {
				wantAfter = append(wantAfter, "c1/"+s)
			}
			if diff := cmp.Diff(wantAfter, after); diff != "" {
				t.Errorf("post hook saw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandHook(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	// The hook refuses ApplyBatch, fails when it can see the model key or the agent token
	// (so every call would be refused), and keeps what
	// it was given.
	prog := filepath.Join(dir, "hook.sh")
	body := "#!/bin/sh\nin=$(cat)\nprintf '%s\\n' \"$in\" >> " + seen + "\n" +
		"if env | grep -q -e DOCKET_MODEL_KEY -e DOCKET_AGENT_TOKEN; then echo secret visible >&2; exit 3; fi\n" +
		"case \"$in\" in *'\"phase\":\"pre\"'*'\"tool\":\"ApplyBatch\"'*) echo '{\"refuse\":\"no batches today\"}';; esac\n"
	if err := os.WriteFile(prog, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKET_MODEL_KEY", "sk-hook-sentinel")
	t.Setenv("DOCKET_AGENT_TOKEN", "dkt_agt_hook")
	r := newRig(t)
	h := agent.CommandHook{Argv: []string{prog}}
	if _, err := r.loop(t, script(t, hookScript), func(c *agent.LoopConfig) { c.Hook = h }).Send(t.Context(), "c1", "go"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if diff := cmp.Diff([]string{"QueryBoard", "OpenCase"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls sent (-want +got):\n%s", diff)
	}
	res := results(t, r.store, "c1")
	if code, _, _ := head(t, res[1]); code != contract.CodeHookRefused || !strings.Contains(res[1].Content, "no batches today") {
		t.Errorf("ApplyBatch result = %s, want the hook's refusal", res[1].Content)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// pre QueryBoard, post QueryBoard, pre ApplyBatch, pre OpenCase, post OpenCase
	if len(lines) != 5 || !strings.Contains(lines[1], `"phase":"post"`) || !strings.Contains(lines[1], `"result"`) {
		t.Errorf("the hook saw %d events:\n%s\nwant 5 with the post phase carrying the result", len(lines), b)
	}
}
