package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_Agents: an Agent created from the page shows its token once, on the page
// that answers the form, and never again — not on reload, not in a URL, not in the log;
// rotating shows a new one and ends the old; revoking ends the Agent's token.
func TestPages_Agents(t *testing.T) {
	const scoutRow = `//tr[.//a[text()="scout"]]`
	r := newPagesRig(t)
	r.signIn(t)
	r.mark(t, "a")
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.WaitVisible(chromedp.CSS("table.agents")))
	if got := r.b.Text("table.agents tbody"); !strings.Contains(got, "calc") || !strings.Contains(got, "ApplyAction mark") ||
		!strings.Contains(got, "waiting for a decision") {
		t.Errorf("the Agents list shows %q, want calc with its last operation, the mark waiting for a decision", got)
	}

	r.b.Do(chromedp.SendKeys(chromedp.ID("agent-name"), "scout"),
		chromedp.Click(chromedp.ID("create-agent")),
		chromedp.WaitVisible(chromedp.ID("agent-token")))
	token := browsertest.Run(r.b, chromedp.Value(chromedp.ID("agent-token")))
	c, err := r.a.Directory().Authenticate(t.Context(), identity.Token(token))
	if err != nil || c.Kind != contract.PrincipalAgent || c.Name != "scout" {
		t.Fatalf("the token the page showed authenticates as %+v, %v; want Agent scout", c, err)
	}
	if got := r.b.Text("#issued"); !strings.Contains(got, "never again") {
		t.Errorf("the token is shown with %q, want it said that it is shown once", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agents page with a token: %q", ps)
	}
	r.b.Screenshot(screenshots, "agents-token")

	// Reading the page again shows no token.
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.WaitVisible(chromedp.Search(scoutRow)))
	if html := browsertest.Run(r.b, chromedp.Evaluate[string]("document.documentElement.outerHTML")); strings.Contains(html, token) {
		t.Errorf("the Agents page read again shows the token")
	}
	if n := browsertest.Run(r.b, chromedp.Evaluate[int]("document.querySelectorAll('#agent-token').length")); n != 0 {
		t.Errorf("the Agents page read again has %d token fields, want none", n)
	}

	// Rotating shows a new token and ends the old one.
	r.b.Do(chromedp.Click(chromedp.Search(`//button[@aria-label="Rotate the token of scout"]`)), chromedp.WaitVisible(chromedp.ID("agent-token")))
	rotated := browsertest.Run(r.b, chromedp.Value(chromedp.ID("agent-token")))
	if rotated == token || rotated == "" {
		t.Errorf("rotating showed %q, want a new token", rotated)
	}
	if _, err := r.a.Directory().Authenticate(t.Context(), identity.Token(token)); err == nil {
		t.Errorf("the token before the rotation still authenticates")
	}
	if _, err := r.a.Directory().Authenticate(t.Context(), identity.Token(rotated)); err != nil {
		t.Errorf("the rotated token does not authenticate: %v", err)
	}

	// Revoking ends it; the row says so and offers no more forms.
	r.b.Do(chromedp.Click(chromedp.Search(`//button[@aria-label="Revoke scout"]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Agent revoked") {
		t.Errorf("after revoking, the notice is %q", got)
	}
	if _, err := r.a.Directory().Authenticate(t.Context(), identity.Token(rotated)); err == nil {
		t.Errorf("the revoked Agent's token still authenticates")
	}
	if got := browsertest.Run(r.b, chromedp.Text(chromedp.Search(scoutRow))); !strings.Contains(got, "revoked") || strings.Contains(got, "Rotate") {
		t.Errorf("the revoked Agent's row is %q, want it revoked without forms", got)
	}

	// Neither token is in a URL the browser asked for, nor in the project's log.
	for _, resp := range r.b.Responses() {
		if strings.Contains(resp.URL, token) || strings.Contains(resp.URL, rotated) {
			t.Errorf("a token is in the URL %s", resp.URL)
		}
	}
	es, err := r.a.Events(t.Context(), mustCaller(t, r.testServer), "default", 0, authority.MaxEventPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.Contains(string(e.Data), token) || strings.Contains(string(e.Data), rotated) {
			t.Errorf("event %d (%s) holds a token", e.Seq, e.Type)
		}
	}
}

// TestPages_AgentConversation: an Agent's page shows its Operations and its saved
// conversations, one saved while it is open arriving without a reload, and a
// conversation's page its transcript with the tool calls and their results, read-only.
func TestPages_AgentConversation(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	at, err := r.a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := r.a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []string{
		`{"role": "user", "text": "Mark topic z."}`,
		`{"role": "assistant", "text": "I will mark it.", "calls": [{"id": "call_1", "name": "ApplyAction", "arguments": {"action": "mark", "params": {"topic": "z"}}}]}`,
		`{"role": "user", "results": [{"callId": "call_1", "content": "waiting for a decision: req_1", "isError": false}]}`,
		`{"role": "user", "results": [{"callId": "call_2", "content": "invalid_argument: no such Action", "isError": true}]}`,
	}
	save := contract.ConversationSave{}
	for _, m := range msgs {
		save.Messages = append(save.Messages, json.RawMessage(m))
	}
	if _, err := r.a.SaveConversation(ctx, writer, "first-run", save); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	r.mark(t, "c")

	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.Click(chromedp.Search(`//a[text()="calc"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.ops")))
	if got := r.b.Text("table.ops tbody"); !strings.Contains(got, "ApplyAction mark") || !strings.Contains(got, "waiting for a decision") {
		t.Errorf("calc's strip shows %q, want the mark waiting for a decision", got)
	}
	if got := r.b.Text("#conversations"); !strings.Contains(got, "No conversation saved yet") {
		t.Errorf("calc's conversations show %q, want none", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("an Agent's page: %q", ps)
	}

	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents/"+string(at.Agent.ID)), chromedp.WaitVisible(chromedp.ID("strip-empty")),
		chromedp.Click(chromedp.Search(`//a[text()="first-run"]`)), chromedp.WaitVisible(chromedp.CSS("ol.transcript")))
	got := r.b.Text("ol.transcript")
	for _, want := range []string{"Mark topic z.", "I will mark it.", "ApplyAction", "call_1", "params\t{\"topic\":\"z\"}", "waiting for a decision: req_1",
		"Failed", "no such Action"} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript shows %q, want it to show %q", got, want)
		}
	}
	if n := browsertest.Run(r.b, chromedp.Evaluate[int]("document.querySelectorAll('main form:not(#message-form)').length")); n != 0 {
		t.Errorf("the transcript has %d forms besides the one that adds a message, want none: its messages are read-only", n)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("a transcript page: %q", ps)
	}
	r.b.Screenshot(screenshots, "transcript")

	// A conversation saved while the Agent's page is open appears there without a reload.
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents/"+string(at.Agent.ID)), chromedp.WaitVisible(chromedp.ID("strip-empty")),
		chromedp.Evaluate[chromedp.Void]("window.docketMark = 'same page'"))
	if _, err := r.a.SaveConversation(ctx, writer, "second-run", contract.ConversationSave{Messages: save.Messages[:1]}); err != nil {
		t.Fatal(err)
	}
	r.b.Do(chromedp.WaitVisible(chromedp.Search(`//a[text()="second-run"]`)))
	if got := browsertest.Run(r.b, chromedp.Evaluate[string]("window.docketMark")); got != "same page" {
		t.Errorf("the conversation appeared after a reload (mark %q), want it merged into the open page", got)
	}
}

// TestPages_NewPagesWithoutBrowser: the Agents, Workers and Capabilities pages as a client
// without JavaScript sees them, and their forms refused without the session's CSRF token.
func TestPages_NewPagesWithoutBrowser(t *testing.T) {
	s := newTestServer(t, console.Config{})
	sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	cookie := sess.Token.String()
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	_, page := s.do(t, request{method: "GET", path: "/projects/default/agents", cookie: cookie})
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the Agents page has no CSRF field:\n%s", page)
	}
	csrf := string(m[1])
	tests := []struct {
		name   string
		req    request
		status int
		to     string
		body   string
	}{
		{name: "agents without a session", req: request{method: "GET", path: "/projects/default/agents"}, status: 303, to: "/signin?next=%2Fprojects%2Fdefault%2Fagents"},
		{name: "agents", req: request{method: "GET", path: "/projects/default/agents", cookie: cookie}, status: 200, body: "No Agent yet"},
		{name: "no such agent", req: request{method: "GET", path: "/projects/default/agents/agt_nope", cookie: cookie}, status: 404, body: "has no Agent agt_nope"},
		{name: "workers", req: request{method: "GET", path: "/projects/default/workers", cookie: cookie}, status: 200, body: "No Connection yet"},
		{name: "capabilities", req: request{method: "GET", path: "/projects/default/capabilities", cookie: cookie}, status: 200, body: "No capability installed yet"},
		{name: "a rotation's address read again", req: request{method: "GET", path: "/projects/default/agents/agt_x/token", cookie: cookie}, status: 303, to: "/projects/default/agents"},
		{name: "create without the CSRF token", req: request{method: "POST", path: "/projects/default/agents", cookie: cookie, header: form, body: "name=sneaky"}, status: 403, body: "csrf_token"},
		{name: "rotate without the CSRF token", req: request{method: "POST", path: "/projects/default/agents/agt_x/token", cookie: cookie, header: form}, status: 403, body: "csrf_token"},
		{name: "revoke without the CSRF token", req: request{method: "POST", path: "/projects/default/agents/agt_x/revoke", cookie: cookie, header: form}, status: 403, body: "csrf_token"},
		{name: "create with a bad name", req: request{method: "POST", path: "/projects/default/agents", cookie: cookie, header: form,
			body: "csrf=" + url.QueryEscape(csrf) + "&name=" + url.QueryEscape("no spaces allowed?")}, status: 400, body: `id="create-error"`},
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
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("%s %s has Content-Security-Policy %q, want the console's", tt.req.method, tt.req.path, csp)
			}
		})
	}
	if as, err := s.a.Directory().Agents(t.Context(), mustCaller(t, s), "default"); err != nil || len(as) != 0 {
		t.Errorf("Agents after the refused forms = %+v, %v; want none", as, err)
	}
}

// TestPages_AgentsKeyboard: Tab walks the Agents page in reading order — navigation, the
// introduction's link to the blueprints, each Agent's link and forms, then the create
// form — and an Agent is created from the keyboard alone.
func TestPages_AgentsKeyboard(t *testing.T) {
	r := newPagesRig(t)
	r.signIn(t)
	as, err := r.a.Directory().Agents(t.Context(), mustCaller(t, r.testServer), "default")
	if err != nil || len(as) != 1 {
		t.Fatalf("Agents = %+v, %v; want calc alone", as, err)
	}
	calc := string(as[0].ID)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.WaitVisible(chromedp.ID("agent-name")))
	// The navigation's links, in its order, whatever pages it lists; then the page's own.
	nav := browsertest.Run(r.b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("nav[aria-label=Console] a")].map(a => "a " + a.textContent.trim().replace(/\s+/g, " "))`))
	if !slices.Contains(nav, "a Agents") {
		t.Errorf("the navigation is %q, want Agents in it", nav)
	}
	want := append(append([]string{"a Skip to content", "a Docket"}, nav...), "button Sign out",
		"a blueprints-link", "a calc", "button rotate-"+calc, "button revoke-"+calc, "input agent-name", "select agent-kind", "button create-agent")
	if diff := cmp.Diff(want, r.b.Focus(len(want))); diff != "" {
		t.Errorf("Tab order (-want +got):\n%s", diff)
	}
	// Back to the name field, type a name and press Enter.
	r.b.Do(chromedp.KeyEvent("\t", chromedp.KeyModifiers(chromedp.ModifierShift)),
		chromedp.KeyEvent("\t", chromedp.KeyModifiers(chromedp.ModifierShift)),
		chromedp.KeyEvent("keyed\r"),
		chromedp.WaitVisible(chromedp.ID("agent-token")))
	if got := r.b.Text("#issued-h"); got != "Token of keyed" {
		t.Errorf("after Enter in the create form the page shows %q, want the token of keyed", got)
	}
}

// TestPages_AgentsRuntime: the Agents page shows each Agent's profile and the state
// docket start last reported of its runtime, with why it is not running, so that a
// runtime that cannot start says so where a person looks.
func TestPages_AgentsRuntime(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	p, err := r.a.SetAgentProfile(ctx, admin, "default", "calc", contract.ProfileSpec{Provider: "openai", ModelURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	st := contract.RuntimeStatus{State: contract.RuntimeRestarting, Restarts: 3, Reason: "exited: exit status 2; its last words: the model key file is readable by others"}
	if _, err := r.a.ReportAgentRuntime(ctx, admin, "default", "calc", st); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	cell := "#runtime-" + string(p.Agent)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents"), chromedp.WaitVisible(chromedp.CSS(cell)))
	got := r.b.Text(cell)
	for _, want := range []string{"openai qwen2.5", "restarting", "after 3 restarts", "readable by others"} {
		if !strings.Contains(got, want) {
			t.Errorf("the Agent's runtime cell is %q, want %q in it", got, want)
		}
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agents page with a runtime: %q", ps)
	}
}

// TestPages_AgentRuntimeToggle: an Agent's page stops and starts its runtime by setting
// its profile's enabled flag, which docket start follows; the page shows the runtime's
// state.
func TestPages_AgentRuntimeToggle(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	p, err := r.a.SetAgentProfile(ctx, admin, "default", "calc", contract.ProfileSpec{Provider: "openai", ModelURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.a.ReportAgentRuntime(ctx, admin, "default", "calc", contract.RuntimeStatus{State: contract.RuntimeRunning, Pid: 4242}); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents/"+string(p.Agent)), chromedp.WaitVisible(chromedp.ID("runtime-stop")))
	if got := r.b.Text("#runtime"); !strings.Contains(got, "openai qwen2.5") || !strings.Contains(got, "running") {
		t.Errorf("the runtime shows %q, want its model and running", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agent page with a runtime: %q", ps)
	}
	r.b.Do(chromedp.Click(chromedp.ID("runtime-stop")), chromedp.WaitVisible(chromedp.ID("runtime-start")))
	if got, err := r.a.AgentProfile(ctx, admin, "default", "calc"); err != nil || got.Enabled {
		t.Fatalf("after Stop the profile = %+v, %v; want it disabled", got, err)
	}
	if got := r.b.Text(".notice"); !strings.Contains(got, "stops") {
		t.Errorf("after Stop the notice is %q", got)
	}
	r.b.Do(chromedp.Click(chromedp.ID("runtime-start")), chromedp.WaitVisible(chromedp.ID("runtime-stop")))
	if got, err := r.a.AgentProfile(ctx, admin, "default", "calc"); err != nil || !got.Enabled || got.ProfileSpec.Model != "qwen2.5" {
		t.Errorf("after Start the profile = %+v, %v; want it enabled, the rest kept", got, err)
	}
}
