package console_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestMetrics_Authenticated serves GET /metrics only to a member acting in person: its
// labels name every project, so an Agent's token and a delegate, which act in one
// project, are refused (docs/observability.md).
func TestMetrics_Authenticated(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("docket_up 1\n")) })
	s := newTestServer(t, console.Config{Metrics: metrics})
	resp, b := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: s.token, body: `{"name":"calc"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create agent = %d %s", resp.StatusCode, b)
	}
	agent := decode[contract.AgentToken](t, b).Token
	resp, b = s.do(t, request{method: "POST", path: "/api/v1/projects/default/delegates", bearer: s.token, body: `{"name":"asst","life":"8h"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create delegate = %d %s", resp.StatusCode, b)
	}
	delegate := decode[contract.DelegateToken](t, b).Token
	for _, c := range []struct {
		name   string
		bearer string
		want   int
	}{
		{"no credential", "", http.StatusUnauthorized},
		{"an unknown session", "dkt_ses_not-a-session", http.StatusUnauthorized},
		{"an Agent's token", agent, http.StatusForbidden},
		{"a delegate", delegate, http.StatusForbidden},
		{"a member's session", s.token, http.StatusOK},
	} {
		resp, body := s.do(t, request{method: http.MethodGet, path: "/metrics", bearer: c.bearer})
		if resp.StatusCode != c.want {
			t.Errorf("GET /metrics with %s = %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
		if c.want == http.StatusForbidden && decode[contract.Error](t, body).Code != contract.CodeForbidden {
			t.Errorf("GET /metrics with %s = %s, want %s", c.name, body, contract.CodeForbidden)
		}
		if c.want == http.StatusOK && string(body) != "docket_up 1\n" {
			t.Errorf("GET /metrics = %q, want the metrics handler's answer", body)
		}
	}
}
