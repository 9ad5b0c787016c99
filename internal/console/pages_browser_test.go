package console_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
)

// screenshots is where the browser tests write the images docs/console.md shows.
const screenshots = "../../docs/console"

// pagesRig is the console with the MCP gateway on one listener, a capability whose Action
// mark needs a person, Agent calc connected through the gateway with the official MCP
// SDK client, and a headless browser.
type pagesRig struct {
	*testServer
	b     *browsertest.Browser
	agent *mcpclient.Client
}

func newPagesRig(t *testing.T, flags ...string) *pagesRig {
	t.Helper()
	s := newTestServerWith(t, console.Config{}, func(a *authority.Authority, ops *authority.Operations, cfg *console.Config) {
		cfg.Routes = map[string]http.Handler{"/mcp": gateway.New(gateway.Config{Auth: a.Directory(), Ops: ops, Strips: ops.Operations()})}
	})
	ctx := t.Context()
	toml, err := os.ReadFile(filepath.Join("testdata", "pages", "capability.toml"))
	if err != nil {
		t.Fatal(err)
	}
	admin := mustCaller(t, s)
	if _, err := s.a.InstallCapability(ctx, admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": string(toml)}}); err != nil {
		t.Fatal(err)
	}
	at, err := s.a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := mcpclient.Dial(ctx, mcpclient.Config{URL: s.URL + "/mcp", Token: at.Token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	// Started last, so that it closes first and its open streams do not hold the server.
	b := browsertest.New(t, flags...)
	r := &pagesRig{testServer: s, b: b, agent: agent}
	t.Cleanup(func() { r.checkClean(t) })
	return r
}

// signIn signs ada in from the sign-in page.
func (r *pagesRig) signIn(t *testing.T) {
	t.Helper()
	r.b.SignIn(r.URL, "ada", testPassphrase)
}

// mark has the Agent apply mark through the gateway: the Action needs a person, so the
// answer is an Operation waiting for a decision.
func (r *pagesRig) mark(t *testing.T, topic string) {
	t.Helper()
	res, err := r.agent.Call(t.Context(), contract.ToolApplyAction, json.RawMessage(fmt.Sprintf(`{"action":"mark","params":{"topic":%q}}`, topic)))
	if err != nil {
		t.Fatal(err)
	}
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(res.Text), &tr); err != nil {
		t.Fatalf("ApplyAction mark: %v\n%s", err, res.Text)
	}
	if len(tr.Operations) == 0 || tr.Operations[0].State != contract.OpWaitingForDecision {
		t.Fatalf("ApplyAction mark = %s, want an Operation waiting for a decision", res.Text)
	}
}

// pending returns the project's pending Requests.
func (r *pagesRig) pending(t *testing.T) []contract.Request {
	t.Helper()
	rs, err := r.ops.Operations().Requests(t.Context(), mustCaller(t, r.testServer), "default")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(rs, func(q contract.Request) bool { return q.State != contract.RequestPending })
}

// checkClean fails the test when a page reported a problem — a CSP violation, a console
// error, an exception — or a response of the console lacked the CSP header.
func (r *pagesRig) checkClean(t *testing.T) {
	t.Helper()
	if ps := r.b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems:\n%s", strings.Join(ps, "\n"))
	}
	n := 0
	for _, resp := range r.b.Responses() {
		if !strings.HasPrefix(resp.URL, r.URL+"/") {
			continue
		}
		n++
		if !strings.Contains(resp.CSP, "script-src 'self'") || !strings.Contains(resp.CSP, "frame-ancestors 'none'") {
			t.Errorf("%s (%d) has Content-Security-Policy %q, want the console's", resp.URL, resp.Status, resp.CSP)
		}
	}
	if n == 0 && !t.Failed() && !t.Skipped() {
		t.Errorf("the browser saw no response of the console")
	}
}

func TestPages_SignIn(t *testing.T) {
	r := newPagesRig(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("#passphrase")))
	r.b.Screenshot(screenshots, "signin")

	r.b.Do(chromedp.SendKeys(chromedp.CSS("#name"), "ada"),
		chromedp.SendKeys(chromedp.CSS("#passphrase"), "wrong horse battery\r"))
	if got := r.b.Text("#signin-error"); got == "" {
		t.Errorf("a wrong passphrase shows no refusal")
	}
	if got := browsertest.Run(r.b, chromedp.Value(chromedp.CSS("#name"))); got != "ada" {
		t.Errorf("after a refusal the name field holds %q, want ada", got)
	}

	r.b.Do(chromedp.SendKeys(chromedp.CSS("#passphrase"), testPassphrase+"\r"),
		chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")))
	// The sign-in link named Needs you; signing in goes there.
	if got := r.b.Text("h1"); got != "Needs you" {
		t.Errorf("after signing in the page is %q, want Needs you", got)
	}
	var cookie bool
	for _, c := range r.b.Cookies(r.URL) {
		if c.Name == "docket_session" {
			cookie = true
			if !c.HTTPOnly || c.SameSite != "Strict" {
				t.Errorf("session cookie HttpOnly=%v SameSite=%q, want HttpOnly and Strict", c.HTTPOnly, c.SameSite)
			}
		}
	}
	if !cookie {
		t.Errorf("signing in set no session cookie")
	}
}

// TestPages_NeedsYou: a Request appears on the open page without a reload when the
// Agent's call needs a person, the badge counts it, and approving it from the page runs
// the call.
func TestPages_NeedsYou(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("#requests-empty")))
	// A reload would drop this mark.
	r.b.Do(chromedp.Evaluate[chromedp.Void]("window.docketMark = 'same page'"))
	if got := r.b.Text("#needs-count"); got != "0" {
		t.Errorf("badge before the call = %q, want 0", got)
	}

	r.mark(t, "a")
	q := r.pending(t)[0]
	r.b.Do(chromedp.WaitVisible(chromedp.ID(string(q.ID))))
	if got := browsertest.Run(r.b, chromedp.Evaluate[string]("window.docketMark")); got != "same page" {
		t.Errorf("the request appeared after a reload (mark %q), want it merged into the open page", got)
	}
	r.b.Do(chromedp.WaitVisible(chromedp.Search(`//span[@id="needs-count"][text()="1"]`)))
	section := r.b.Text("#" + string(q.ID))
	for _, want := range []string{"mark", "Mark a topic, once a person approves.", "calc", "approval names a person", q.Digest, "args.topic", `"a"`} {
		if !strings.Contains(section, want) {
			t.Errorf("the request shows %q, want it to show %q", section, want)
		}
	}
	r.b.Screenshot(screenshots, "needs-you")

	r.b.Do(chromedp.Click(chromedp.ID(string(q.ID)+"-approve")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Request approved") {
		t.Errorf("after approving, the notice is %q, want Request approved", got)
	}
	if n := len(r.pending(t)); n != 0 {
		t.Errorf("pending requests after approving = %d, want 0", n)
	}
	res, err := r.agent.Call(t.Context(), contract.ToolQueryBoard, json.RawMessage(`{"pattern":{"predicate":"marked","args":{"topic":"?t"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, `"predicate":"marked"`) {
		t.Errorf("after the approval the Board has no marked fact: %s", res.Text)
	}

	r.b.Do(chromedp.Click(chromedp.Search(`//a[text()="History"]`)), chromedp.WaitVisible(chromedp.ID(string(q.ID))))
	if got := r.b.Text("#" + string(q.ID)); !strings.Contains(got, "approved") || !strings.Contains(got, "Decided by\nada at") || strings.Contains(got, "member:") {
		t.Errorf("the history shows %q, want the request approved by the member, by name", got)
	}
	r.b.Screenshot(screenshots, "needs-you-history")
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/operations"), chromedp.WaitVisible(chromedp.CSS("table.ops")))
	r.b.Screenshot(screenshots, "operations")
}

// TestPages_Deny: the reason typed on the page is what the Agent is told.
func TestPages_Deny(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	// Operations is open when the call comes: its row and the badge arrive live.
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/operations"), chromedp.WaitVisible(chromedp.ID("agents-empty")))
	r.mark(t, "b")
	q := r.pending(t)[0]
	r.b.Do(chromedp.WaitVisible(chromedp.Search(`//span[@id="needs-count"][text()="1"]`)),
		chromedp.WaitVisible(chromedp.Search(`//td//span[text()="waiting for a decision"]`)))
	if got := r.b.Text("table.ops tbody"); !strings.Contains(got, "ApplyAction mark") || !strings.Contains(got, string(q.ID)) {
		t.Errorf("the Operations row is %q, want the mark waiting on %s", got, q.ID)
	}
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"),
		chromedp.SendKeys(chromedp.ID(string(q.ID)+"-reason"), "topic b is out of scope"),
		chromedp.Click(chromedp.ID(string(q.ID)+"-deny")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	strip, err := r.agent.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(strip) == 0 || strip[0].State != contract.OpRefused || !strings.Contains(strip[0].Reason, "topic b is out of scope") {
		t.Errorf("the agent's strip = %+v, want the mark refused with the reason typed on the page", strip)
	}
}

// TestPages_Keyboard: the pages read well to a screen reader (labels, one h1, headings
// in order, captioned tables), and Tab walks a Needs you page in reading order — skip
// link, navigation, sign out, tabs, then each request's decision — so that a request can
// be approved from the keyboard alone.
func TestPages_Keyboard(t *testing.T) {
	r := newPagesRig(t)
	r.b.Do(chromedp.Navigate(r.URL + "/signin"))
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("sign-in page: %q", ps)
	}
	r.signIn(t)
	r.mark(t, "k")
	q := r.pending(t)[0]
	for _, page := range []string{"needs", "needs/history", "operations", "agents", "workers", "capabilities"} {
		r.b.Do(chromedp.Navigate(r.URL+"/projects/default/"+page), chromedp.WaitVisible(chromedp.CSS("h1")))
		if ps := r.b.A11yProblems(); len(ps) > 0 {
			t.Errorf("%s page: %q", page, ps)
		}
	}
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID(string(q.ID))))
	// The navigation's links, in its order, whatever pages it lists; Needs you comes first.
	nav := browsertest.Run(r.b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("nav[aria-label=Console] a")].map(a => "a " + a.textContent.trim().replace(/\s+/g, " "))`))
	if len(nav) < 2 || nav[0] != "a Needs you 1" || nav[1] != "a Operations" {
		t.Errorf("the navigation is %q, want Needs you with its count, then Operations", nav)
	}
	want := append(append([]string{"a Skip to content", "a Docket"}, nav...), "button Sign out", "a Waiting", "a History",
		"button "+string(q.ID)+"-approve", "textarea "+string(q.ID)+"-reason", "button "+string(q.ID)+"-deny")
	got := r.b.Focus(len(want))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tab order (-want +got):\n%s", diff)
	}
	// The focus is on Deny; Shift+Tab twice reaches Approve, and Enter presses it.
	r.b.Do(chromedp.KeyEvent("\t", chromedp.KeyModifiers(chromedp.ModifierShift)),
		chromedp.KeyEvent("\t", chromedp.KeyModifiers(chromedp.ModifierShift)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Request approved") {
		t.Errorf("after Enter on Approve, the notice is %q", got)
	}
}

// TestPages_WithoutJavaScript: with JavaScript off, a member signs in, reads the Request
// and denies it; only the live updates are lost.
func TestPages_WithoutJavaScript(t *testing.T) {
	r := newPagesRig(t)
	r.b.DisableScript()
	r.signIn(t)
	r.mark(t, "d")
	q := r.pending(t)[0]
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/"),
		chromedp.SendKeys(chromedp.ID(string(q.ID)+"-reason"), "not without a script"),
		chromedp.Click(chromedp.ID(string(q.ID)+"-deny")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Request denied") {
		t.Errorf("after denying without JavaScript, the notice is %q", got)
	}
	for _, resp := range r.b.Responses() {
		if strings.Contains(resp.URL, "/api/v1/events") {
			t.Errorf("with JavaScript off the page opened the event stream %s", resp.URL)
		}
	}
}

// TestPages_Refusals: a form posted from another origin, a page asked for under another
// Host and a form without the session's CSRF token change nothing.
func TestPages_Refusals(t *testing.T) {
	r := newPagesRig(t, "host-resolver-rules=MAP rebind.test 127.0.0.1")
	r.signIn(t)
	r.mark(t, "c")
	q := r.pending(t)[0]

	// Another site on this machine posts a decision form to the console the moment it is
	// opened; it cannot know the CSRF token, and the browser says where the form came from.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/projects/default/needs/%s/decision">
<input name="digest" value="%s"><input name="verdict" value="approve"></form>
<script>document.getElementById("f").submit()</script>`, r.URL, q.ID, q.Digest)
	}))
	t.Cleanup(evil.Close)
	r.b.Do(chromedp.Navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)),
		chromedp.WaitVisible(chromedp.CSS(".refusal")))
	if got := r.b.Text(".refusal"); !strings.Contains(got, string(contract.CodeCrossOrigin)) {
		t.Errorf("a cross-origin decision form shows %q, want %s", got, contract.CodeCrossOrigin)
	}
	if len(r.pending(t)) != 1 {
		t.Errorf("a cross-origin form decided the request")
	}

	// A DNS-rebinding page reaches the console's port under its own name.
	r.b.Do(chromedp.Navigate("http://rebind.test:" + r.port(t) + "/signin"))
	if got := r.b.Text(".refusal"); !strings.Contains(got, string(contract.CodeHostNotAllowed)) {
		t.Errorf("the console under Host rebind.test shows %q, want %s", got, contract.CodeHostNotAllowed)
	}

	// The console's own page with its CSRF token field emptied.
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"),
		chromedp.WaitVisible(chromedp.ID(string(q.ID))),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("input[name=csrf]").forEach(i => i.value = "")`),
		chromedp.Click(chromedp.ID(string(q.ID)+"-approve")),
		chromedp.WaitVisible(chromedp.CSS(".refusal")))
	if got := r.b.Text(".refusal"); !strings.Contains(got, string(contract.CodeCSRF)) {
		t.Errorf("a form without the CSRF token shows %q, want %s", got, contract.CodeCSRF)
	}
	if len(r.pending(t)) != 1 {
		t.Errorf("a form without the CSRF token decided the request")
	}
}

// TestPages_CSPViolationsAreSeen shows the problem check can fail: a page with inline
// script under the console's policy is reported.
func TestPages_CSPViolationsAreSeen(t *testing.T) {
	b := browsertest.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><p id="p">inline</p><script>document.title = "ran"</script>`)
	}))
	t.Cleanup(srv.Close)
	b.Do(chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("p")))
	if got := browsertest.Run(b, chromedp.Title()); got == "ran" {
		t.Fatalf("the inline script ran under script-src 'self'")
	}
	ps := b.Problems()
	if !slices.ContainsFunc(ps, func(p string) bool { return strings.Contains(p, "Content Security Policy") }) {
		t.Errorf("problems = %q, want the CSP violation of the inline script", ps)
	}
}

// TestPages_SignOutEndsStream: signing out ends the session's open event streams at once,
// not at their next read of the log.
func TestPages_SignOutEndsStream(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	var session string
	for _, c := range r.b.Cookies(r.URL) {
		if c.Name == "docket_session" {
			session = c.Value
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), "GET", r.URL+"/api/v1/events?project=default", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "docket_session", Value: session})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream with the browser's session = %d, want 200", resp.StatusCode)
	}
	ended := make(chan error, 1) // written once by the reading goroutine
	go func() {
		rd := bufio.NewReader(resp.Body)
		for {
			if _, err := rd.ReadString('\n'); err != nil {
				ended <- err
				return
			}
		}
	}()

	r.b.Do(chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)), chromedp.WaitVisible(chromedp.CSS("#passphrase")))
	<-ended // the test's deadline fails it if the stream stays open
	if _, err := r.a.Directory().Authenticate(t.Context(), identity.Token(session)); contract.CodeOf(err) != contract.CodeCredentialRevoked {
		t.Errorf("the session after signing out authenticates (%v), want %s", err, contract.CodeCredentialRevoked)
	}
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("#passphrase")))
}
