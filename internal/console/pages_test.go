package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/console"
)

// TestPages_WithoutBrowser: the pages' routes as a client without JavaScript sees them —
// where each sends a visitor without a session, what each refuses, and that every answer
// carries the CSP header.
func TestPages_WithoutBrowser(t *testing.T) {
	s := newTestServer(t, console.Config{})
	sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	cookie := sess.Token.String()
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	tests := []struct {
		name   string
		req    request
		status int
		to     string // the redirect's Location
		body   string // a part of the body
	}{
		{name: "home without a session", req: request{method: "GET", path: "/"}, status: 303, to: "/signin?next=%2F"},
		{name: "a page without a session", req: request{method: "GET", path: "/projects/default/needs"}, status: 303, to: "/signin?next=%2Fprojects%2Fdefault%2Fneeds"},
		{name: "a stale session", req: request{method: "GET", path: "/projects/default/needs", cookie: "dkt_ses_stale"}, status: 303, to: "/signin?next=%2Fprojects%2Fdefault%2Fneeds"},
		{name: "sign-in page", req: request{method: "GET", path: "/signin"}, status: 200, body: `<label for="passphrase">`},
		{name: "home with a session", req: request{method: "GET", path: "/", cookie: cookie}, status: 303, to: "/projects/default/"},
		{name: "project home, nothing in it", req: request{method: "GET", path: "/projects/default/", cookie: cookie}, status: 303, to: "/projects/default/get-started"},
		{name: "get started, serve alone", req: request{method: "GET", path: "/projects/default/get-started", cookie: cookie}, status: 200, body: `id="example-cli"`},
		{name: "needs you", req: request{method: "GET", path: "/projects/default/needs", cookie: cookie}, status: 200, body: "Nothing waits for a person."},
		{name: "history", req: request{method: "GET", path: "/projects/default/needs/history", cookie: cookie}, status: 200, body: "No request was decided"},
		{name: "operations", req: request{method: "GET", path: "/projects/default/operations", cookie: cookie}, status: 200, body: "No Agent has made a call yet."},
		{name: "another project", req: request{method: "GET", path: "/projects/other/needs", cookie: cookie}, status: 403, body: "forbidden"},
		{name: "no such page", req: request{method: "GET", path: "/nowhere", cookie: cookie}, status: 404, body: "there is no page at /nowhere"},
		{name: "stylesheet", req: request{method: "GET", path: "/static/console.css"}, status: 200, body: ":root"},
		{name: "script", req: request{method: "GET", path: "/static/live.js"}, status: 200, body: "EventSource"},
		{name: "wrong passphrase", req: request{method: "POST", path: "/signin", header: form, body: "name=ada&passphrase=nope"}, status: 401, body: `id="signin-error"`},
		{name: "sign in goes to next", req: request{method: "POST", path: "/signin", header: form, body: "name=ada&passphrase=" + url.QueryEscape(testPassphrase) + "&next=%2Fprojects%2Fdefault%2Fneeds"}, status: 303, to: "/projects/default/needs"},
		{name: "sign in never goes to another site", req: request{method: "POST", path: "/signin", header: form, body: "name=ada&passphrase=" + url.QueryEscape(testPassphrase) + "&next=%2F%2Fevil.example%2F"}, status: 303, to: "/"},
		{name: "decision without the CSRF token", req: request{method: "POST", path: "/projects/default/needs/req_x/decision", cookie: cookie, header: form, body: "digest=sha256:a&verdict=approve"}, status: 403, body: "csrf_token"},
		{name: "reconcile without the CSRF token", req: request{method: "POST", path: "/projects/default/operations/agt_x.1/reconcile", cookie: cookie, header: form, body: "outcome=done"}, status: 403, body: "csrf_token"},
		{name: "sign out without the CSRF token", req: request{method: "POST", path: "/signout", cookie: cookie, header: form}, status: 403, body: "csrf_token"},
		{name: "cross-origin sign-in", req: request{method: "POST", path: "/signin", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site", "Accept": "text/html"}, body: "name=ada"}, status: 403, body: "cross_origin"},
		{name: "wrong Host, as a page", req: request{method: "GET", path: "/signin", host: "evil.example:" + s.port(t), header: map[string]string{"Accept": "text/html"}}, status: 403, body: `class="refusal"`},
		{name: "wrong Host, as the API", req: request{method: "GET", path: "/signin", host: "evil.example:" + s.port(t)}, status: 403, body: `"errorCode":"host_not_allowed"`},
	}
	noRedirect := *s.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := s.doWith(t, &noRedirect, tt.req)
			if resp.StatusCode != tt.status {
				t.Errorf("%s %s = %d, want %d\n%s", tt.req.method, tt.req.path, resp.StatusCode, tt.status, body)
			}
			if got := resp.Header.Get("Location"); got != tt.to {
				t.Errorf("%s %s redirects to %q, want %q", tt.req.method, tt.req.path, got, tt.to)
			}
			if !strings.Contains(string(body), tt.body) {
				t.Errorf("%s %s body does not contain %q:\n%s", tt.req.method, tt.req.path, tt.body, body)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "form-action 'self'") {
				t.Errorf("%s %s has Content-Security-Policy %q, want the console's", tt.req.method, tt.req.path, csp)
			}
		})
	}
}
