package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestServer_Profiles: a member sets an Agent's profile over /api/v1, reads it and the
// list, and docket start's report of the runtime shows on both; bodies are read
// strictly, and a profile that cannot work is refused with its field named.
func TestServer_Profiles(t *testing.T) {
	s := newTestServer(t, console.Config{})
	if _, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	const path = "/api/v1/projects/default/agents/calc/profile"
	tests := []struct {
		name, method, path, body string
		status                   int
		code                     contract.Code
		teaching                 string
	}{
		{"an unknown field", "PUT", path, `{"provider":"openai","model":"m","apiKey":"sk-x"}`, 400, contract.CodeInvalidArgument, "the model key itself never goes to the authority"},
		{"a duplicate key", "PUT", path, `{"provider":"openai","provider":"anthropic","model":"m"}`, 400, contract.CodeDuplicateKey, ""},
		{"an unknown provider", "PUT", path, `{"provider":"gemini","model":"m"}`, 400, contract.CodeProfileInvalid, "provider"},
		{"a report before any profile", "PUT", "/api/v1/projects/default/agents/calc/runtime", `{"state":"running"}`, 404, contract.CodeNotFound, ""},
		{"no profile yet", "GET", path, "", 404, contract.CodeNotFound, "docket agent profile set"},
		{"the profile", "PUT", path, `{"provider":"openai","modelUrl":"http://127.0.0.1:8080/v1","model":"m","enabled":true}`, 200, "", ""},
		{"an unknown state", "PUT", "/api/v1/projects/default/agents/calc/runtime", `{"state":"asleep"}`, 400, contract.CodeInvalidArgument, "runtime state"},
		{"a report", "PUT", "/api/v1/projects/default/agents/calc/runtime", `{"state":"failed","reason":"no key"}`, 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, raw := s.do(t, request{method: tt.method, path: tt.path, bearer: s.token, body: tt.body})
			if resp.StatusCode != tt.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, raw, tt.status)
			}
			if tt.code != "" {
				e := decode[contract.Error](t, raw)
				if e.Code != tt.code || !strings.Contains(e.Teaching, tt.teaching) {
					t.Errorf("%s %s = %+v, want %s teaching %q", tt.method, tt.path, e, tt.code, tt.teaching)
				}
			}
		})
	}
	resp, raw := s.do(t, request{method: "GET", path: "/api/v1/projects/default/profiles", bearer: s.token})
	page := decode[contract.Page[contract.AgentProfile]](t, raw)
	if resp.StatusCode != http.StatusOK || len(page.Items) != 1 || page.Items[0].AgentName != "calc" || page.Items[0].Runtime == nil ||
		page.Items[0].Runtime.State != contract.RuntimeFailed || page.Items[0].Runtime.Reason != "no key" {
		t.Errorf("profiles = %d %+v, want calc's with its runtime reported failed", resp.StatusCode, page)
	}
}
