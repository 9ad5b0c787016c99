package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
)

// TestServer_HookRoutes: the hook routes take only a hook token (never a member's, an
// Agent's own or an orchestrator's) and a strictly decoded body, answer a call with its
// verdict, and refuse an outcome of a call never reported before it ran.
func TestServer_HookRoutes(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "coder", Hook: true})
	if err != nil {
		t.Fatal(err)
	}
	own, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	boss, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "boss", Kind: "orchestrator"})
	if err != nil {
		t.Fatal(err)
	}
	const call = `{"cli":"claude-code","callId":"toolu_1","tool":"Bash","input":{"command":"ls"},"command":"ls"}`
	digest := `"outputDigest":"sha256:` + strings.Repeat("ab", 32) + `"`
	tests := []struct {
		name, path, token, body string
		status                  int
		code                    contract.Code
	}{
		{"a member's token", "/api/v1/hook/calls", s.token, call, http.StatusForbidden, contract.CodeForbidden},
		{"an orchestrator's token", "/api/v1/hook/calls", boss.Token, call, http.StatusForbidden, contract.CodeForbidden},
		{"an Agent's own token", "/api/v1/hook/calls", own.Token, call, http.StatusForbidden, contract.CodeForbidden},
		{"an orchestrator's token on outcomes", "/api/v1/hook/outcomes", boss.Token, `{"callId":"toolu_9","tool":"Bash","ok":true,` + digest + `,"outputBytes":3}`, http.StatusForbidden, contract.CodeForbidden},
		{"no token", "/api/v1/hook/calls", "", call, http.StatusUnauthorized, contract.CodeUnauthenticated},
		{"an unknown field", "/api/v1/hook/calls", ag.Token, `{"cli":"claude-code","callId":"t","tool":"Bash","input":{},"allow":true}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"a duplicate key in the input", "/api/v1/hook/calls", ag.Token, `{"cli":"claude-code","callId":"t","tool":"Bash","input":{"command":"ls","command":"rm -rf /"}}`, http.StatusBadRequest, contract.CodeDuplicateKey},
		{"no tool", "/api/v1/hook/calls", ag.Token, `{"cli":"claude-code","callId":"t","input":{}}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"a wait past the bound", "/api/v1/hook/calls", ag.Token, `{"cli":"claude-code","callId":"t","tool":"Bash","input":{},"waitMs":999999999}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an outcome of a call never reported", "/api/v1/hook/outcomes", ag.Token, `{"callId":"toolu_9","tool":"Bash","ok":true,` + digest + `,"outputBytes":3}`, http.StatusNotFound, contract.CodeHookUnknownCall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := s.do(t, request{method: "POST", path: tt.path, bearer: tt.token, body: tt.body})
			ce := decode[contract.Error](t, body)
			if resp.StatusCode != tt.status || ce.Code != tt.code || ce.Teaching == "" {
				t.Errorf("POST %s = %d %s %q, want %d %s with a teaching", tt.path, resp.StatusCode, ce.Code, ce.Teaching, tt.status, tt.code)
			}
		})
	}

	// Under the built-in hook policy the call needs a decision; with no wait it is
	// withdrawn at once and denied, and its outcome cannot be reported as run.
	resp, body := s.do(t, request{method: "POST", path: "/api/v1/hook/calls", bearer: ag.Token, body: call})
	v := decode[contract.HookVerdict](t, body)
	if resp.StatusCode != http.StatusOK || v.Allow || v.Mode != contract.HookDecide || v.ErrorCode != contract.CodeHookUndecided || v.Ordinal != 1 {
		t.Errorf("the call = %d %+v, want 200, mode decide, denied hook_undecided, ordinal 1", resp.StatusCode, v)
	}
	resp, body = s.do(t, request{method: "GET", path: "/api/v1/projects/default/agents/" + string(ag.Agent.ID) + "/hook-calls", bearer: s.token})
	page := decode[contract.Page[contract.HookCallEntry]](t, body)
	if resp.StatusCode != http.StatusOK || len(page.Items) != 1 || page.Items[0].Decision != "expired" || page.Items[0].Command != "ls" {
		t.Errorf("the member's listing = %d %+v, want the one call, expired", resp.StatusCode, page)
	}
	if resp, _ := s.do(t, request{method: "GET", path: "/api/v1/projects/default/agents/" + string(ag.Agent.ID) + "/hook-calls", bearer: ag.Token}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the Agent read its own listing: %d, want 403", resp.StatusCode)
	}
}

// TestServer_HookTokenReachesOnlyTheHookRoutes: over a real listener, a hook token opens
// no /mcp session and reaches no route but the hook routes — not the Board, not a task,
// not its own Agent's listing — while the hook routes answer it.
func TestServer_HookTokenReachesOnlyTheHookRoutes(t *testing.T) {
	s := newTestServerWith(t, console.Config{}, func(a *authority.Authority, ops *authority.Operations, cfg *console.Config) {
		cfg.Routes = map[string]http.Handler{"/mcp": gateway.New(gateway.Config{Auth: a.Directory(), Ops: ops, Strips: ops.Operations()})}
	})
	hk, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "coder", Hook: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hk.Token, contract.PrefixHook) {
		t.Fatalf("a hook token %.8s… does not begin %s", hk.Token, contract.PrefixHook)
	}
	if _, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: s.URL + "/mcp", Token: hk.Token}); err == nil {
		t.Error("a hook token opened an /mcp session")
	}
	for _, r := range []request{
		{method: "GET", path: "/api/v1/whoami"},
		{method: "GET", path: "/api/v1/projects/default/facts"},
		{method: "GET", path: "/api/v1/projects/default/tasks"},
		{method: "GET", path: "/api/v1/projects/default/agents/" + string(hk.Agent.ID) + "/hook-calls"},
		{method: "GET", path: "/api/v1/projects/default/events"},
	} {
		r.bearer = hk.Token
		resp, body := s.do(t, r)
		if ce := decode[contract.Error](t, body); resp.StatusCode != http.StatusForbidden || ce.Code != contract.CodeForbidden {
			t.Errorf("%s %s with a hook token = %d %s, want 403 forbidden", r.method, r.path, resp.StatusCode, ce.Code)
		}
	}
	resp, body := s.do(t, request{method: "POST", path: "/api/v1/hook/calls", bearer: hk.Token,
		body: `{"cli":"claude-code","callId":"toolu_1","tool":"Read","input":{"file_path":"/r/a"},"path":"a"}`})
	if v := decode[contract.HookVerdict](t, body); resp.StatusCode != http.StatusOK || v.Ordinal != 1 {
		t.Errorf("the hook route with the hook token = %d %+v, want 200 and the call recorded", resp.StatusCode, v)
	}

	// Replacing the token for the hook (docket hook install --replace-token) keeps it a
	// hook token; any other query is refused.
	resp, body = s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/coder/token?for=hook", bearer: s.token})
	if at := decode[contract.AgentToken](t, body); resp.StatusCode != http.StatusOK || !strings.HasPrefix(at.Token, contract.PrefixHook) {
		t.Errorf("replace the hook token = %d, token %.8s…, want 200 and a hook token", resp.StatusCode, at.Token)
	}
	if resp, _ := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/coder/token?for=mcp", bearer: s.token}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("replace a token ?for=mcp = %d, want 400", resp.StatusCode)
	}
}
