package console_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

func TestServer_Policies(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	body := func(text string) string {
		b, err := json.Marshal(contract.PublishPolicyRequest{File: "recovery.toml", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const recovery = "[recovery_policy]\nmax_attempts = 2\n"
	resp, raw := s.do(t, request{method: "POST", path: "/api/v1/projects/default/policies", bearer: s.token, body: body(recovery)})
	v := decode[contract.PolicyVersion](t, raw)
	if resp.StatusCode != http.StatusCreated || v.Kind != contract.PolicyRecovery || v.Version != 2 {
		t.Fatalf("publish = %d %+v, want 201 recovery version 2", resp.StatusCode, v)
	}
	resp, raw = s.do(t, request{method: "GET", path: "/api/v1/projects/default/policies/recovery?version=1", bearer: s.token})
	if v := decode[contract.PolicyVersion](t, raw); resp.StatusCode != http.StatusOK || !v.Builtin || v.Text == "" {
		t.Errorf("show version 1 = %d %+v, want the built-in text", resp.StatusCode, v)
	}
	resp, raw = s.do(t, request{method: "GET", path: "/api/v1/projects/default/policies/recovery/diff?from=1", bearer: s.token})
	if d := decode[contract.PolicyDiff](t, raw); resp.StatusCode != http.StatusOK || d.To != 2 || !strings.Contains(d.Diff, "+ max_attempts = 2") {
		t.Errorf("diff 1.. = %d %+v", resp.StatusCode, d)
	}
	resp, raw = s.do(t, request{method: "GET", path: "/api/v1/projects/default/policies", bearer: s.token})
	if p := decode[contract.Page[contract.PolicyVersion]](t, raw); resp.StatusCode != http.StatusOK || len(p.Items) != 7 {
		t.Errorf("list = %d %+v, want 7 versions: the built-in one of each of the six kinds and recovery 2", resp.StatusCode, p)
	}

	tests := []refusalCase{
		{"an agent publishes", request{method: "POST", path: "/api/v1/projects/default/policies", bearer: ag.Token, body: body("[recovery_policy]\n")}, http.StatusForbidden, contract.CodeForbidden},
		{"malformed", request{method: "POST", path: "/api/v1/projects/default/policies", bearer: s.token, body: body("[recovery_policy]\nmax_attempts = 0\n")}, http.StatusBadRequest, contract.CodePolicyInvalid},
		{"unknown field", request{method: "POST", path: "/api/v1/projects/default/policies", bearer: s.token, body: `{"file":"a","text":"","by":"me"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"the text in force", request{method: "POST", path: "/api/v1/projects/default/policies", bearer: s.token, body: body(recovery)}, http.StatusConflict, contract.CodeAlreadyExists},
		{"unknown kind", request{method: "GET", path: "/api/v1/projects/default/policies/everything", bearer: s.token}, http.StatusNotFound, contract.CodeNotFound},
		{"unknown version", request{method: "GET", path: "/api/v1/projects/default/policies/autonomy?version=9", bearer: s.token}, http.StatusNotFound, contract.CodeNotFound},
		{"diff without from", request{method: "GET", path: "/api/v1/projects/default/policies/autonomy/diff", bearer: s.token}, http.StatusBadRequest, contract.CodeInvalidArgument},
	}
	wantRefusals(t, s, tests)
}

func TestServer_Autonomy(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	resp, raw := s.do(t, request{method: "PUT", path: "/api/v1/projects/default/agents/calc/level", bearer: s.token, body: `{"level":"attended"}`})
	if a := decode[contract.Autonomy](t, raw); resp.StatusCode != http.StatusOK || a.Level != "attended" {
		t.Fatalf("set level = %d %+v", resp.StatusCode, a)
	}
	resp, raw = s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/calc/windows", bearer: s.token, body: `{"minutes":15}`})
	if a := decode[contract.Autonomy](t, raw); resp.StatusCode != http.StatusCreated || len(a.Windows) != 1 {
		t.Fatalf("open window = %d %+v", resp.StatusCode, a)
	}
	resp, raw = s.do(t, request{method: "GET", path: "/api/v1/projects/default/agents/calc/autonomy", bearer: s.token})
	if a := decode[contract.Autonomy](t, raw); resp.StatusCode != http.StatusOK || a.Level != "attended" || len(a.Windows) != 1 {
		t.Errorf("autonomy = %d %+v", resp.StatusCode, a)
	}
	tests := []refusalCase{
		{"an agent opens its own window", request{method: "POST", path: "/api/v1/projects/default/agents/calc/windows", bearer: ag.Token, body: `{"minutes":15}`}, http.StatusForbidden, contract.CodeForbidden},
		{"an agent sets its level", request{method: "PUT", path: "/api/v1/projects/default/agents/calc/level", bearer: ag.Token, body: `{"level":"unattended"}`}, http.StatusForbidden, contract.CodeForbidden},
		{"an unknown level", request{method: "PUT", path: "/api/v1/projects/default/agents/calc/level", bearer: s.token, body: `{"level":"sometimes"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"a window too long", request{method: "POST", path: "/api/v1/projects/default/agents/calc/windows", bearer: s.token, body: `{"minutes":99999}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an unknown field", request{method: "POST", path: "/api/v1/projects/default/agents/calc/windows", bearer: s.token, body: `{"minutes":5,"for":"me"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an unknown agent", request{method: "GET", path: "/api/v1/projects/default/agents/nobody/autonomy", bearer: s.token}, http.StatusNotFound, contract.CodeNotFound},
	}
	wantRefusals(t, s, tests)
}

// refusalCase is a request the server refuses with status and code, and a teaching.
type refusalCase struct {
	name   string
	r      request
	status int
	code   contract.Code
}

func wantRefusals(t *testing.T, s *testServer, tests []refusalCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, raw := s.do(t, tt.r)
			ce := decode[contract.Error](t, raw)
			if resp.StatusCode != tt.status || ce.Code != tt.code || ce.Teaching == "" {
				t.Errorf("%s %s = %d %s %q, want %d %s with a teaching", tt.r.method, tt.r.path, resp.StatusCode, ce.Code, ce.Teaching, tt.status, tt.code)
			}
		})
	}
}

func TestServer_RetryRefusals(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/projects/default/operations/" + string(ag.Agent.ID) + ".1/retry"
	wantRefusals(t, s, []refusalCase{
		{"an agent retries", request{method: "POST", path: path, bearer: ag.Token, body: `{"reason":"again"}`}, http.StatusForbidden, contract.CodeForbidden},
		{"no reason", request{method: "POST", path: path, bearer: s.token, body: `{"reason":""}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"an unknown field", request{method: "POST", path: path, bearer: s.token, body: `{"reason":"x","now":true}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"no such Operation", request{method: "POST", path: path, bearer: s.token, body: `{"reason":"again"}`}, http.StatusNotFound, contract.CodeNotFound},
		{"not an Operation", request{method: "POST", path: "/api/v1/projects/default/operations/nope/retry", bearer: s.token, body: `{"reason":"again"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
	})
}
