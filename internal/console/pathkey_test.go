package console_test

import (
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestPathKey: a serve started with a path key, as docket start's is, answers only under
// /k/<key> (its internal port once took 20 logins in 3.7 s without the run key).
func TestPathKey(t *testing.T) {
	s := newTestServer(t, console.Config{PathKey: "SERVEKEY"})
	login := `{"name":"ada","passphrase":"` + testPassphrase + `"}`
	tests := []struct {
		name   string
		r      request
		status int
		code   contract.Code
	}{
		{"no key", request{method: "GET", path: "/api/v1/health"}, 401, contract.CodeRunKeyRequired},
		{"a login without the key", request{method: "POST", path: "/api/v1/sessions", body: login}, 401, contract.CodeRunKeyRequired},
		{"another key", request{method: "GET", path: "/k/SERVEKEZ/api/v1/health"}, 401, contract.CodeRunKeyRequired},
		{"a prefix of the key", request{method: "GET", path: "/k/SERVE/api/v1/health"}, 401, contract.CodeRunKeyRequired},
		{"the key", request{method: "GET", path: "/k/SERVEKEY/api/v1/health"}, 200, ""},
		{"a login with the key", request{method: "POST", path: "/k/SERVEKEY/api/v1/sessions", body: login}, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := s.do(t, tt.r)
			if resp.StatusCode != tt.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.r.method, tt.r.path, resp.StatusCode, b, tt.status)
			}
			if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s %s lacks the security headers", tt.r.method, tt.r.path)
			}
			if tt.code != "" {
				if e := decode[contract.Error](t, b); e.Code != tt.code || e.Teaching == "" {
					t.Errorf("%s %s = %s, want %q with a teaching", tt.r.method, tt.r.path, b, tt.code)
				}
			}
		})
	}
}
