package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestServer_Blueprints: a member sets a blueprint over /api/v1, reads it and the list,
// makes an Agent's profile from it and removes it; bodies are read strictly, and each
// refusal carries its code and names the field.
func TestServer_Blueprints(t *testing.T) {
	s := newTestServer(t, console.Config{})
	if _, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	const (
		path = "/api/v1/projects/default/blueprints/explorer"
		from = "/api/v1/projects/default/agents/calc/profile/from-blueprint"
		good = `{"description":"Explores.","profile":{"provider":"openai","modelUrl":"http://127.0.0.1:8080/v1","model":"m","allow":{"caseTypes":["exploration"],"actions":["docket.ask"]}}}`
	)
	tests := []struct {
		name, method, path, body string
		status                   int
		code                     contract.Code
		teaching                 string
	}{
		{"an unknown field", "PUT", path, `{"profile":{"provider":"openai","model":"m"},"apiKey":"sk-x"}`, 400, contract.CodeInvalidArgument, "no keyFile"},
		{"a duplicate key", "PUT", path, `{"description":"a","description":"b","profile":{}}`, 400, contract.CodeDuplicateKey, ""},
		{"a key file", "PUT", path, `{"profile":{"provider":"openai","modelUrl":"http://127.0.0.1:8080/v1","model":"m","keyFile":"k","allow":{"actions":["docket.ask"]}}}`, 400, contract.CodeBlueprintInvalid, "keyFile"},
		{"an undeclared Case Type", "PUT", path, `{"profile":{"provider":"openai","modelUrl":"http://127.0.0.1:8080/v1","model":"m","allow":{"caseTypes":["payroll"]}}}`, 400, contract.CodeBlueprintInvalid, "payroll"},
		{"a bad name", "PUT", "/api/v1/projects/default/blueprints/Bad", good, 400, contract.CodeBlueprintInvalid, "name"},
		{"no blueprint yet", "GET", path, "", 404, contract.CodeNotFound, "docket agent blueprint list"},
		{"the blueprint", "PUT", path, good, 200, "", ""},
		{"a stale digest", "POST", from, `{"blueprint":"explorer","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}`, 409, contract.CodeBlueprintChanged, "read it again"},
		{"an unknown field to from-blueprint", "POST", from, `{"blueprint":"explorer","model":"x"}`, 400, contract.CodeInvalidArgument, "keyFile"},
		{"a profile from it", "POST", from, `{"blueprint":"explorer","keyFile":"/k/calc.key","enabled":true}`, 200, "", ""},
		{"removed", "DELETE", path, "", 204, "", ""},
		{"removed twice", "DELETE", path, "", 404, contract.CodeNotFound, ""},
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
	resp, raw := s.do(t, request{method: "GET", path: "/api/v1/projects/default/agents/calc/profile", bearer: s.token})
	p := decode[contract.AgentProfile](t, raw)
	if resp.StatusCode != http.StatusOK || p.Blueprint == nil || p.Blueprint.Name != "explorer" || p.BlueprintState != contract.BlueprintRemoved ||
		p.KeyFile != "/k/calc.key" || p.Allow == nil || p.Allow.Actions[0] != "docket.ask" {
		t.Errorf("profile = %d %+v, want the copy of explorer, its key file, the blueprint removed", resp.StatusCode, p)
	}
	resp, raw = s.do(t, request{method: "GET", path: "/api/v1/projects/default/blueprints", bearer: s.token})
	if page := decode[contract.Page[contract.Blueprint]](t, raw); resp.StatusCode != http.StatusOK || len(page.Items) != 0 {
		t.Errorf("blueprints = %d %+v, want none", resp.StatusCode, page)
	}
}
