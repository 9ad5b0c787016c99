package console_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

func TestServer_Conversations(t *testing.T) {
	s := newTestServer(t, console.Config{})
	resp, b := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", body: `{"name":"calc"}`, bearer: s.token})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create agent: %s %s", resp.Status, b)
	}
	at := decode[contract.AgentToken](t, b)

	steps := []struct {
		name   string
		req    request
		status int
		code   contract.Code
	}{
		{"the agent saves", request{method: "POST", path: "/api/v1/conversations/c1/saves", body: `{"prev":0,"from":0,"messages":[{"role":"user","text":"go"}],"state":{}}`, bearer: at.Token}, http.StatusOK, ""},
		{"a member does not save", request{method: "POST", path: "/api/v1/conversations/c1/saves", body: `{"prev":0,"from":0,"messages":[]}`, bearer: s.token}, http.StatusForbidden, contract.CodeForbidden},
		{"an unknown field is refused", request{method: "POST", path: "/api/v1/conversations/c1/saves", body: `{"prev":0,"from":0,"messages":[],"key":"x"}`, bearer: at.Token}, http.StatusBadRequest, ""},
		{"no credential", request{method: "GET", path: "/api/v1/conversations/c1"}, http.StatusUnauthorized, contract.CodeUnauthenticated},
		{"the agent records a budget", request{method: "POST", path: "/api/v1/conversations/c1/budget-exhausted", body: `{"scope":"run","kind":"turns","limit":1,"used":1,"turns":1,"inputTokens":0,"outputTokens":0,"usd":0}`, bearer: at.Token}, http.StatusNoContent, ""},
		{"the agent reads its own", request{method: "GET", path: "/api/v1/conversations/c1", bearer: at.Token}, http.StatusOK, ""},
		{"an unknown conversation", request{method: "GET", path: "/api/v1/conversations/c2", bearer: at.Token}, http.StatusNotFound, contract.CodeNotFound},
		{"a member lists them", request{method: "GET", path: "/api/v1/projects/default/conversations?agent=calc", bearer: s.token}, http.StatusOK, ""},
		{"a member reads one", request{method: "GET", path: "/api/v1/projects/default/agents/calc/conversations/c1", bearer: s.token}, http.StatusOK, ""},
		{"the agent does not list", request{method: "GET", path: "/api/v1/projects/default/conversations", bearer: at.Token}, http.StatusForbidden, contract.CodeForbidden},
	}
	for _, st := range steps {
		resp, b := s.do(t, st.req)
		if resp.StatusCode != st.status {
			t.Fatalf("%s: %s %s, want %d", st.name, resp.Status, b, st.status)
		}
		if st.code != "" {
			if got := decode[contract.Error](t, b); got.Code != st.code {
				t.Errorf("%s: code %q, want %q", st.name, got.Code, st.code)
			}
		}
	}
	_, b = s.do(t, request{method: "GET", path: "/api/v1/projects/default/agents/calc/conversations/c1", bearer: s.token})
	c := decode[contract.Conversation](t, b)
	if len(c.Messages) != 1 || len(c.Budgets) != 1 || c.Budgets[0].Kind != "turns" {
		t.Errorf("conversation = %s; want one message and one turns budget", b)
	}
	_, b = s.do(t, request{method: "GET", path: "/api/v1/projects/default/conversations", bearer: s.token})
	if page := decode[contract.Page[contract.ConversationSummary]](t, b); len(page.Items) != 1 || page.Items[0].ID != "c1" || page.Items[0].Messages != 1 {
		t.Errorf("list = %s; want c1 with one message", b)
	}
}
