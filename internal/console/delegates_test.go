package console_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// pathOf fills a route pattern's wildcards so that the request reaches its handler.
func pathOf(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	r := strings.NewReplacer("{project}", "default", "{agent}", "calc", "{connection}", "con_0000000000000000",
		"{source}", "src", "{tool}", "x.y@1", "{id}", "req_0000000000000000", "{op}", "op_0000000000000000",
		"{delegate}", "asst", "{conversation}", "cnv_0000000000000000", "{card}", "crd_0000000000000000")
	return method, r.Replace(path)
}

// consentBody is a body a consent operation's card can be bound with: the subject each
// names must be readable.
func consentBody(t *testing.T, op string) string {
	t.Helper()
	switch op {
	case "agent.create", "connection.create":
		return `{"name":"new"}`
	case "capability.install":
		toml, err := os.ReadFile(filepath.Join("testdata", "pages", "capability.toml"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(contract.CapabilityUpload{Files: map[string]string{"capability.toml": string(toml)}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return "{}"
}

// newEvents returns the types of the events of project default after seq.
func newEvents(t *testing.T, s *testServer, after int64) []string {
	t.Helper()
	evs, err := s.st.Events(t.Context(), "default", after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	return types
}

// TestServer_DelegateGate: over every changing operation of the one table, a delegate's
// call goes by its class — operational reaches the authority as the delegate, consent
// records a card (its one event) and runs nothing, member-only is refused and changes
// nothing — and its reads stay in its one project; the console's pages refuse it (issue
// 15). The authority's own refusal of member-only acts, with no gate in front, is
// TestDelegate_MemberOnlyRefusedByTheAuthority.
func TestServer_DelegateGate(t *testing.T) {
	s := newTestServer(t, console.Config{})
	resp, b := s.do(t, request{method: "POST", path: "/api/v1/projects/default/delegates", bearer: s.token, body: `{"name":"asst","life":"8h"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create delegate: %d %s", resp.StatusCode, b)
	}
	dlg := decode[contract.DelegateToken](t, b).Token
	public := map[string]bool{"POST /api/v1/sessions": true, "POST /api/v1/sessions/cookie": true}
	reason := map[string]string{contract.ReasonHeader: "the calculation needs it"}
	for _, op := range opclass.Table {
		if public[op.Route] {
			continue // a passphrase, not a credential, opens a session
		}
		t.Run(op.Name, func(t *testing.T) {
			method, path := pathOf(op.Route)
			before := logHead(t, s)
			body := "{}"
			if op.Class == opclass.Consent {
				body = consentBody(t, op.Name)
			}
			resp, b := s.do(t, request{method: method, path: path, bearer: dlg, body: body, header: reason})
			code := decode[contract.Error](t, b).Code
			switch op.Class {
			case opclass.Operational:
				if code == contract.CodeMemberOnly || code == contract.CodeConsentRequired || code == contract.CodeCardRecorded {
					t.Errorf("operational %s stopped by the gate: %d %s", op.Name, resp.StatusCode, b)
				}
			case opclass.Consent:
				ans := decode[contract.CardAnswer](t, b)
				if resp.StatusCode != http.StatusAccepted || ans.Code != contract.CodeCardRecorded || ans.Card.State != contract.CardOpen ||
					ans.Card.Operation != op.Name || ans.Card.ProposedBy != "member:ada/asst" || !strings.Contains(ans.Teaching, "docket confirm "+ans.Card.ID) {
					t.Fatalf("consent %s = %d %s, want 202 card_recorded with an open card", op.Name, resp.StatusCode, b)
				}
				if diff := cmp.Diff([]string{event.CardRecorded}, newEvents(t, s, before)); diff != "" {
					t.Errorf("a consent %s changed more than its card (-want +got):\n%s", op.Name, diff)
				}
			case opclass.MemberOnly:
				if resp.StatusCode != http.StatusForbidden || code != contract.CodeMemberOnly {
					t.Errorf("member-only %s = %d %s, want 403 member_only", op.Name, resp.StatusCode, b)
				}
			}
			if op.Class == opclass.MemberOnly && logHead(t, s) != before {
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
