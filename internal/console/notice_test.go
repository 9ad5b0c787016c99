package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_NoticeIsChosenByCode: a page shows after a form only a message of a fixed
// set, chosen by the code its redirect carries; a link that carries words of its own, or a
// code the console does not know, shows nothing (docs/security.md, "Redirects").
func TestPages_NoticeIsChosenByCode(t *testing.T) {
	s := newTestServer(t, console.Config{})
	resp, b := s.do(t, request{method: "POST", path: "/api/v1/sessions", body: `{"name":"ada","passphrase":"` + testPassphrase + `"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login = %d %s", resp.StatusCode, b)
	}
	sess := decode[contract.SessionCreated](t, b)
	if resp, b := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: s.token, body: `{"name":"scout"}`}); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create agent = %d %s", resp.StatusCode, b)
	}
	noRedirect := *s.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, b = s.doWith(t, &noRedirect, request{method: "POST", path: "/projects/default/agents/scout/revoke", cookie: sess.Token,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: url.Values{"csrf": {sess.CSRFToken}}.Encode()})
	if want := "/projects/default/agents?notice=agent_revoked"; resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Fatalf("revoke from the page = %d to %q, want 303 to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), want, b)
	}
	const forged = "Your session ended; sign in again at evil.example"
	for _, tc := range []struct {
		name, notice, want string
	}{
		{"the code a form's redirect carries", "agent_revoked", "Agent revoked; its token no longer works."},
		{"words of a link", forged, ""},
		{"a code and words", "agent_revoked " + forged, ""},
		{"a code in another case", "AGENT_REVOKED", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := s.do(t, request{method: "GET", path: "/projects/default/agents?notice=" + url.QueryEscape(tc.notice), cookie: sess.Token})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("agents page = %d", resp.StatusCode)
			}
			page := string(b)
			if strings.Contains(page, "evil.example") || strings.Contains(page, "Your session ended") {
				t.Errorf("?notice=%q put the link's words on the page", tc.notice)
			}
			if tc.want != "" && !strings.Contains(page, tc.want) {
				t.Errorf("?notice=%q does not show %q", tc.notice, tc.want)
			}
			if tc.want == "" && strings.Contains(page, `class="notice"`) {
				t.Errorf("?notice=%q shows a notice, want none", tc.notice)
			}
		})
	}
}
