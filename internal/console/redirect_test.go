package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/localpath/localpathtest"
)

// TestSignIn_NextStaysOnOrigin: sign-in sends the browser on only to a path of the
// console's own origin, however the link spells another: with a second listener standing
// for the other site, no hostile next= leads a browser there (docs/security.md,
// "Redirects"). A path of the console's own is kept.
func TestSignIn_NextStaysOnOrigin(t *testing.T) {
	// Every case signs in once: the limit on logins is set above their number.
	s := newTestServer(t, console.Config{Logins: console.LoginLimits{Burst: 100, GlobalBurst: 100}})
	var visits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { visits.Add(1) }))
	t.Cleanup(evil.Close)
	evilURL, err := url.Parse(evil.URL)
	if err != nil {
		t.Fatal(err)
	}
	base, err := url.Parse(s.URL + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := *s.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	signIn := func(t *testing.T, next string) string {
		t.Helper()
		body := url.Values{"name": {"ada"}, "passphrase": {testPassphrase}, "next": {next}}.Encode()
		resp, b := s.doWith(t, &noRedirect, request{method: "POST", path: "/signin", body: body,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign in = %d %s, want 303", resp.StatusCode, b)
		}
		return resp.Header.Get("Location")
	}
	for _, tc := range localpathtest.Hostile(evilURL.Host) {
		t.Run(tc.Name, func(t *testing.T) {
			localpathtest.StaysOn(t, base, fmt.Sprintf("next=%q", tc.Value), signIn(t, tc.Value), &noRedirect, &visits)
		})
	}
	for _, tc := range []struct{ next, want string }{
		{"/projects/default/needs?kind=delegation", "/projects/default/needs?kind=delegation"},
		{"/projects/default/agents/a%20b", "/projects/default/agents/a%20b"},
		{"", "/"},
		{"projects/default/needs", "/"},
	} {
		if got := signIn(t, tc.next); got != tc.want {
			t.Errorf("next=%q answered Location %q, want %q", tc.next, got, tc.want)
		}
	}
	// The form shows a hostile next= as nothing to go back to.
	resp, b := s.do(t, request{method: "GET", path: "/signin?next=" + url.QueryEscape("/\t/"+evilURL.Host+"/")})
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), evilURL.Host) {
		t.Errorf("the sign-in form of a hostile next= = %d, carrying the other site: %v", resp.StatusCode, strings.Contains(string(b), evilURL.Host))
	}
}
