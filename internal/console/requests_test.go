package console_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

func TestServer_RequestRefusals(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	member := s.token
	tests := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		status int
		code   contract.Code
	}{
		{"no token", "GET", "/api/v1/projects/default/requests", "", "", http.StatusUnauthorized, contract.CodeUnauthenticated},
		{"agent token", "GET", "/api/v1/projects/default/requests", ag.Token, "", http.StatusForbidden, contract.CodeForbidden},
		{"other project", "GET", "/api/v1/projects/other/requests", member, "", http.StatusForbidden, contract.CodeForbidden},
		{"unknown field", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"approve","by":"me"}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"two objects", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"approve"}{}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"bad verdict", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"maybe"}`, http.StatusBadRequest, contract.CodeInvalidArgument},
		{"unknown request", "POST", "/api/v1/projects/default/requests/req_x/decision", member, `{"digest":"sha256:a","verdict":"deny"}`, http.StatusNotFound, contract.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := s.do(t, request{method: tt.method, path: tt.path, bearer: tt.token, body: tt.body})
			ce := decode[contract.Error](t, body)
			if resp.StatusCode != tt.status || ce.Code != tt.code || ce.Teaching == "" {
				t.Errorf("%s %s = %d %s %q, want %d %s with a teaching", tt.method, tt.path, resp.StatusCode, ce.Code, ce.Teaching, tt.status, tt.code)
			}
		})
	}
}

// TestServer_DecisionNeedsCSRF: the decision and reconcile routes take the console's
// credentials, so a browser's session cookie alone cannot decide or reconcile.
func TestServer_DecisionNeedsCSRF(t *testing.T) {
	s := newTestServer(t, console.Config{})
	sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/api/v1/projects/default/requests/req_x/decision",
		"/api/v1/projects/default/operations/agt_0123456789abcdef.1/reconcile",
	} {
		resp, body := s.do(t, request{method: "POST", path: path, cookie: sess.Token.String(), body: `{}`})
		if ce := decode[contract.Error](t, body); resp.StatusCode != http.StatusForbidden || ce.Code != contract.CodeCSRF {
			t.Errorf("POST %s with only the cookie = %d %s, want 403 %s", path, resp.StatusCode, ce.Code, contract.CodeCSRF)
		}
	}
}
