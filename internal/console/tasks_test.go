package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestServer_Tasks: a member posts a task for an Agent; the Agent's runtime claims it
// with its token and reports it; the routes refuse what is not theirs, with a code.
func TestServer_Tasks(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	resp, raw := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: s.token, body: `{"text":"Verify job calc-001.","clientKey":"k1"}`})
	task := decode[contract.Task](t, raw)
	if resp.StatusCode != http.StatusCreated || task.State != contract.TaskQueued || task.Agent != ag.Agent.ID {
		t.Fatalf("post = %d %+v, want 201 queued for calc", resp.StatusCode, task)
	}
	resp, raw = s.do(t, request{method: "POST", path: "/api/v1/tasks/claim", bearer: ag.Token, body: `{"waitMs":0}`})
	claim := decode[contract.TaskClaim](t, raw)
	if resp.StatusCode != http.StatusOK || claim.Task == nil || claim.Task.ID != task.ID {
		t.Fatalf("claim = %d %+v, want the posted task", resp.StatusCode, claim)
	}
	resp, raw = s.do(t, request{method: "POST", path: "/api/v1/tasks/" + string(task.ID) + "/report", bearer: ag.Token,
		body: `{"attempt":1,"state":"completed","final":"done","closedCases":[]}`})
	if got := decode[contract.Task](t, raw); resp.StatusCode != http.StatusOK || got.State != contract.TaskCompleted {
		t.Fatalf("report = %d %+v, want completed", resp.StatusCode, got)
	}
	resp, raw = s.do(t, request{method: "GET", path: "/api/v1/projects/default/tasks?agent=calc", bearer: s.token})
	if p := decode[contract.Page[contract.Task]](t, raw); resp.StatusCode != http.StatusOK || len(p.Items) != 1 || p.Items[0].Result == nil {
		t.Errorf("list = %d %+v, want the one task with its result", resp.StatusCode, p)
	}
	resp, raw = s.do(t, request{method: "POST", path: "/api/v1/tasks", bearer: ag.Token, body: `{"text":"my own","conversation":"s-1"}`})
	if own := decode[contract.Task](t, raw); resp.StatusCode != http.StatusCreated || own.PostedBy != contract.Principal("agent:"+string(ag.Agent.ID)) {
		t.Errorf("an Agent's own post = %d %+v, want 201 posted by it", resp.StatusCode, own)
	}

	tests := []refusalCase{
		{"an unknown field", request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: s.token, body: `{"text":"x","shell":"ls"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"another agent in the body", request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: s.token, body: `{"agent":"other","text":"x"}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"the same client key, other text", request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: s.token, body: `{"text":"else","clientKey":"k1"}`}, http.StatusConflict, contract.CodeTaskConflict},
		{"a member claims", request{method: "POST", path: "/api/v1/tasks/claim", bearer: s.token, body: `{}`}, http.StatusForbidden, contract.CodeForbidden},
		{"a member posts as an Agent", request{method: "POST", path: "/api/v1/tasks", bearer: s.token, body: `{"text":"x"}`}, http.StatusForbidden, contract.CodeForbidden},
		{"an Agent posts for another", request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: other.Token, body: `{"text":"x"}`}, http.StatusForbidden, contract.CodeForbidden},
		{"another Agent reports", request{method: "POST", path: "/api/v1/tasks/" + string(task.ID) + "/report", bearer: other.Token, body: `{"attempt":1,"state":"completed","closedCases":[]}`}, http.StatusNotFound, contract.CodeNotFound},
		{"a renewal of a claim not held", request{method: "POST", path: "/api/v1/tasks/" + string(task.ID) + "/renew", bearer: ag.Token, body: `{"attempt":1}`}, http.StatusConflict, contract.CodeTaskNotClaimed},
		{"a poll too long", request{method: "POST", path: "/api/v1/tasks/claim", bearer: ag.Token, body: `{"waitMs":600000}`}, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"a message to no conversation", request{method: "POST", path: "/api/v1/projects/default/agents/calc/conversations/nowhere/messages", bearer: s.token, body: `{"text":"hi"}`}, http.StatusNotFound, contract.CodeNotFound},
	}
	wantRefusals(t, s, tests)
}

// TestServer_BodyRefusalsTeach: a JSON body with a misspelt field, a value of the wrong
// kind or a syntax error is refused with the line, the key and the fix in words — never
// Go's types or a byte offset.
func TestServer_BodyRefusalsTeach(t *testing.T) {
	s := newTestServer(t, console.Config{})
	if _, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		words      []string
	}{
		{"a misspelt field", "{\n  \"txt\": \"Verify job calc-001.\"\n}", []string{`unknown field "txt" (did you mean "text"?) at the top level, line 2`, "its fields are "}},
		{"a value of the wrong kind", `{"text": 7}`, []string{`the value of "text", line 1, is a number, but it takes a string`}},
		{"malformed", "{\"text\": \"x\",\n \"clientKey\" \"k\"}", []string{"line 2, column 14", "expected : after a key", "send valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, raw := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents/calc/tasks", bearer: s.token, body: tt.body})
			got := decode[contract.Error](t, raw)
			if resp.StatusCode != http.StatusBadRequest || got.Code != contract.CodeInvalidArgument {
				t.Fatalf("POST = %d %+v, want 400 invalid_argument", resp.StatusCode, got)
			}
			for _, w := range tt.words {
				if !strings.Contains(got.Teaching, w) {
					t.Errorf("teaching %q\nwant it to say %q", got.Teaching, w)
				}
			}
			for _, goish := range []string{"json:", "Go struct", "byte ", "contract."} {
				if strings.Contains(got.Teaching, goish) {
					t.Errorf("teaching %q reads as Go internals (%q)", got.Teaching, goish)
				}
			}
		})
	}
}
