package console_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
)

// TestMetrics_Authenticated serves GET /metrics only to a credential, like every
// authenticated route.
func TestMetrics_Authenticated(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("docket_up 1\n")) })
	s := newTestServer(t, console.Config{Metrics: metrics})
	for _, c := range []struct {
		bearer string
		want   int
	}{
		{"", http.StatusUnauthorized},
		{"dkt_ses_not-a-session", http.StatusUnauthorized},
		{s.token, http.StatusOK},
	} {
		resp, body := s.do(t, request{method: http.MethodGet, path: "/metrics", bearer: c.bearer})
		if resp.StatusCode != c.want {
			t.Errorf("GET /metrics with a bearer: %t = %d %s, want %d", c.bearer != "", resp.StatusCode, body, c.want)
		}
		if c.want == http.StatusOK && string(body) != "docket_up 1\n" {
			t.Errorf("GET /metrics = %q, want the metrics handler's answer", body)
		}
	}
}
