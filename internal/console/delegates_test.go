package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// pathOf fills a route pattern's wildcards so that the request reaches its handler.
func pathOf(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	r := strings.NewReplacer("{project}", "default", "{agent}", "calc", "{connection}", "con_0000000000000000",
		"{source}", "src", "{tool}", "x.y@1", "{id}", "req_0000000000000000", "{op}", "op_0000000000000000",
		"{delegate}", "asst", "{conversation}", "cnv_0000000000000000")
	return method, r.Replace(path)
}

// TestServer_DelegateGate: over every changing operation of the one table, a delegate's
// call is gated by its class — operational reaches the authority as the delegate,
// consent and member-only are refused and change nothing — and its reads stay in its
// one project; the console's pages refuse it (issue 15).
func TestServer_DelegateGate(t *testing.T) {
	s := newTestServer(t, console.Config{})
	resp, b := s.do(t, request{method: "POST", path: "/api/v1/projects/default/delegates", bearer: s.token, body: `{"name":"asst","life":"8h"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create delegate: %d %s", resp.StatusCode, b)
	}
	dlg := decode[contract.DelegateToken](t, b).Token
	public := map[string]bool{"POST /api/v1/sessions": true, "POST /api/v1/sessions/cookie": true}
	for _, op := range authority.OperationTable() {
		if public[op.Route] {
			continue // a passphrase, not a credential, opens a session
		}
		t.Run(op.Name, func(t *testing.T) {
			method, path := pathOf(op.Route)
			before := logHead(t, s)
			resp, b := s.do(t, request{method: method, path: path, bearer: dlg, body: "{}"})
			code := decode[contract.Error](t, b).Code
			switch op.Class {
			case authority.Operational:
				if code == contract.CodeMemberOnly || code == contract.CodeConsentRequired {
					t.Errorf("operational %s refused by the gate: %d %s", op.Name, resp.StatusCode, b)
				}
			case authority.Consent:
				if resp.StatusCode != http.StatusForbidden || code != contract.CodeConsentRequired {
					t.Errorf("consent %s = %d %s, want 403 consent_required", op.Name, resp.StatusCode, b)
				}
			case authority.MemberOnly:
				if resp.StatusCode != http.StatusForbidden || code != contract.CodeMemberOnly {
					t.Errorf("member-only %s = %d %s, want 403 member_only", op.Name, resp.StatusCode, b)
				}
			}
			if op.Class != authority.Operational && logHead(t, s) != before {
				t.Errorf("a refused %s appended events", op.Name)
			}
		})
	}

	if resp, b := s.do(t, request{method: "GET", path: "/api/v1/projects/default/agents", bearer: dlg}); resp.StatusCode != http.StatusOK {
		t.Errorf("a delegate's read of its project = %d %s, want 200", resp.StatusCode, b)
	}
	if resp, _ := s.do(t, request{method: "POST", path: "/api/v1/projects", bearer: s.token, body: `{"id":"other"}`}); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create project other: %d", resp.StatusCode)
	}
	if resp, b := s.do(t, request{method: "GET", path: "/api/v1/projects/other/agents", bearer: dlg}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a delegate's read of another project = %d %s, want 403", resp.StatusCode, b)
	}
	if resp, _ := s.do(t, request{method: "GET", path: "/projects/default/needs", cookie: dlg}); resp.StatusCode == http.StatusOK {
		t.Errorf("a console page answered a delegate's credential")
	}
	resp, b = s.do(t, request{method: "DELETE", path: "/api/v1/delegates/asst", bearer: s.token})
	if resp.StatusCode != http.StatusOK || decode[contract.Delegate](t, b).RevokedAt == nil {
		t.Fatalf("revoke delegate: %d %s", resp.StatusCode, b)
	}
	if resp, _ := s.do(t, request{method: "GET", path: "/api/v1/whoami", bearer: dlg}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked delegate's read = %d, want 401", resp.StatusCode)
	}
}
