package console_test

import (
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

func TestServer_Reconcile(t *testing.T) {
	s := newTestServer(t, console.Config{})
	ctx := t.Context()
	ck, err := s.a.Directory().CreateConnection(ctx, mustCaller(t, s), "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	at, err := s.a.Directory().CreateAgent(ctx, mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/projects/default/operations/agt_0123456789abcdef.1/reconcile"
	tests := []struct {
		name   string
		auth   string
		body   string
		status int
		code   contract.Code
	}{
		{"no credential", "", `{"outcome":"done"}`, 401, contract.CodeUnauthenticated},
		{"an agent", at.Token, `{"outcome":"done"}`, 403, contract.CodeForbidden},
		{"a connection key", ck.Key, `{"outcome":"done"}`, 401, contract.CodeUnauthenticated},
		{"unknown field", s.token, `{"outcome":"done","force":true}`, 400, contract.CodeInvalidArgument},
		{"unknown outcome", s.token, `{"outcome":"maybe"}`, 400, contract.CodeInvalidArgument},
		{"failed without a reason", s.token, `{"outcome":"failed"}`, 400, contract.CodeInvalidArgument},
		{"no such operation", s.token, `{"outcome":"done"}`, 404, contract.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := s.do(t, request{method: "POST", path: path, bearer: tt.auth, body: tt.body})
			if e := decode[contract.Error](t, body); resp.StatusCode != tt.status || e.Code != tt.code {
				t.Errorf("reconcile = %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.code)
			}
		})
	}
}
