package console_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/authority/schedule"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

const testPassphrase = "correct horse battery"

// testServer is the console over a real authority and SQLite store, initialized with
// member "ada" in project "default".
type testServer struct {
	*httptest.Server
	st    store.Store
	a     *authority.Authority
	ops   *authority.Operations
	disp  *operation.Dispatcher
	sched *schedule.Keeper // nil when the test gave its own
	token string
}

func newTestServer(t testing.TB, cfg console.Config) *testServer {
	t.Helper()
	return newTestServerWith(t, cfg, nil)
}

// newTestServerWith is newTestServer with setup changing the configuration once the
// server's authority and Operations exist: further routes on the listener (the MCP
// gateway, for instance), or an Authority that wraps the real one.
func newTestServerWith(t testing.TB, cfg console.Config, setup func(*authority.Authority, *authority.Operations, *console.Config)) *testServer {
	t.Helper()
	return newTestServerOn(t, authoritytest.Options{}, cfg, setup)
}

// newTestServerOn is newTestServerWith over an authority configured as acfg, whose Store
// and Key it sets.
func newTestServerOn(t testing.TB, acfg authoritytest.Options, cfg console.Config, setup func(*authority.Authority, *authority.Operations, *console.Config)) *testServer {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acfg.Store, acfg.Key = st, identity.Key{1}
	p := authoritytest.New(t, acfg)
	a := p.A
	ops := authority.NewOperations(a, operation.Config{})
	disp := authority.NewDispatcher(ops, operation.DispatcherConfig{})
	cfg.Identity, cfg.Authority, cfg.Requests, cfg.Operations, cfg.Reconciler, cfg.Policies, cfg.Recovery, cfg.Cards = a.Directory(), a, ops.Operations(), ops, disp, a, ops.Operations(), ops
	var sched *schedule.Keeper
	if cfg.Schedules == nil {
		if sched, err = authority.NewSchedules(a, authority.SchedulesConfig{}); err != nil {
			t.Fatal(err)
		}
		cfg.Schedules = sched
	}
	cfg.Hooks, cfg.Artifacts = ops.Operations(), ops.Operations()
	if setup != nil {
		setup(a, ops, &cfg)
	}
	srv, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testServer{Server: hs, st: st, a: a, ops: ops, disp: disp, sched: sched, token: p.Token.String()}
}

// request is one API call of a test.
type request struct {
	method, path string
	body         string
	header       map[string]string
	host         string
	bearer       string // "" sends none
	cookie       string // a session cookie value
}

func (s *testServer) do(t testing.TB, r request) (*http.Response, []byte) {
	t.Helper()
	return s.doWith(t, s.Client(), r)
}

// doWith is do with client c, for a test that reads redirects instead of following them.
func (s *testServer) doWith(t testing.TB, c *http.Client, r request) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(t.Context(), r.method, s.URL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.body != "" && r.header["Content-Type"] == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if r.host != "" {
		req.Host = r.host
	}
	if r.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.bearer)
	}
	if r.cookie != "" {
		req.AddCookie(&http.Cookie{Name: "docket_session", Value: r.cookie})
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, b, err)
	}
	return v
}

func (s *testServer) port(t testing.TB) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestServer_RefusesBadInput(t *testing.T) {
	s := newTestServer(t, console.Config{MaxBody: 256})
	ctx := t.Context()
	ag, err := s.a.Directory().CreateAgent(ctx, mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.a.Directory().CreateConnection(ctx, mustCaller(t, s), "default", contract.CreateConnectionRequest{Name: "laptop"}); err != nil {
		t.Fatal(err)
	}
	sess, err := s.a.Directory().Login(ctx, "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	agents := "/api/v1/projects/default/agents"
	tests := []struct {
		name   string
		req    request
		status int
		code   contract.Code
	}{
		{"malformed JSON", request{method: "POST", path: agents, bearer: s.token, body: `{"name": `}, 400, contract.CodeInvalidArgument},
		{"unknown field", request{method: "POST", path: agents, bearer: s.token, body: `{"name":"x","admin":true}`}, 400, contract.CodeInvalidArgument},
		{"trailing data", request{method: "POST", path: agents, bearer: s.token, body: `{"name":"x"} {"name":"y"}`}, 400, contract.CodeInvalidArgument},
		{"wrong type", request{method: "POST", path: agents, bearer: s.token, body: `{"name":7}`}, 400, contract.CodeInvalidArgument},
		{"empty body", request{method: "POST", path: agents, bearer: s.token}, 400, contract.CodeInvalidArgument},
		{"oversized body", request{method: "POST", path: agents, bearer: s.token, body: `{"name":"` + strings.Repeat("a", 300) + `"}`}, 413, contract.CodeBodyTooLarge},
		{"not JSON", request{method: "POST", path: agents, bearer: s.token, body: `{"name":"x"}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, contract.CodeUnsupportedMedia},
		{"bad name", request{method: "POST", path: agents, bearer: s.token, body: `{"name":"Bad Name"}`}, 400, contract.CodeInvalidArgument},
		{"wrong Host", request{method: "POST", path: agents, bearer: s.token, body: `{"name":"x"}`, host: "evil.example:" + s.port(t)}, 403, contract.CodeHostNotAllowed},
		{"loopback Host, other port", request{method: "GET", path: agents, bearer: s.token, host: "localhost:1"}, 403, contract.CodeHostNotAllowed},
		{"no credential", request{method: "POST", path: agents, body: `{"name":"x"}`}, 401, contract.CodeUnauthenticated},
		{"bad token", request{method: "POST", path: agents, bearer: "dkt_ses_nope", body: `{"name":"x"}`}, 401, contract.CodeUnauthenticated},
		{"not bearer", request{method: "GET", path: agents, header: map[string]string{"Authorization": "Basic YTpi"}}, 401, contract.CodeUnauthenticated},
		{"cookie without CSRF", request{method: "POST", path: agents, cookie: sess.Token.String(), body: `{"name":"x"}`}, 403, contract.CodeCSRF},
		{"cookie with wrong CSRF", request{method: "POST", path: agents, cookie: sess.Token.String(), body: `{"name":"x"}`, header: map[string]string{"X-CSRF-Token": "forged"}}, 403, contract.CodeCSRF},
		{"cross-origin write", request{method: "POST", path: agents, bearer: s.token, body: `{"name":"x"}`, header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403, contract.CodeCrossOrigin},
		{"agent token on admin route", request{method: "POST", path: agents, bearer: ag.Token, body: `{"name":"x"}`}, 403, contract.CodeForbidden},
		{"other project", request{method: "POST", path: "/api/v1/projects/other/agents", bearer: s.token, body: `{"name":"x"}`}, 403, contract.CodeForbidden},
		{"source name differs from path", request{method: "PUT", path: "/api/v1/projects/default/connections/laptop/sources/ws", bearer: s.token, body: `{"name":"other","type":"file","words":["a"],"tier":"attested"}`}, 400, contract.CodeInvalidArgument},
		{"source tier unknown", request{method: "PUT", path: "/api/v1/projects/default/connections/laptop/sources/ws", bearer: s.token, body: `{"type":"file","words":["a"],"tier":"strong"}`}, 400, contract.CodeInvalidArgument},
		{"source type unknown", request{method: "PUT", path: "/api/v1/projects/default/connections/laptop/sources/ws", bearer: s.token, body: `{"type":"ftp","words":["a"],"tier":"attested"}`}, 400, contract.CodeInvalidArgument},
		{"source on unknown connection", request{method: "PUT", path: "/api/v1/projects/default/connections/nope/sources/ws", bearer: s.token, body: `{"type":"file","words":["a"],"tier":"attested"}`}, 404, contract.CodeNotFound},
		{"tool digest malformed", request{method: "PUT", path: "/api/v1/projects/default/connections/laptop/tools/docket.workspace.read_json@1", bearer: s.token, body: `{"digest":"md5:00"}`}, 400, contract.CodeInvalidArgument},
		{"tool id malformed", request{method: "PUT", path: "/api/v1/projects/default/connections/laptop/tools/readjson", bearer: s.token, body: `{"digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`}, 400, contract.CodeInvalidArgument},
		{"capability invalid", request{method: "POST", path: "/api/v1/projects/default/capabilities", bearer: s.token, body: `{"files":{"capability.toml":"id = 1"}}`}, 400, contract.CodeCapabilityInvalid},
		{"no route", request{method: "GET", path: "/api/v1/nothing", bearer: s.token}, 404, contract.CodeNotFound},
		{"bad cursor", request{method: "GET", path: "/api/v1/projects/default/events?after=-1", bearer: s.token}, 400, contract.CodeInvalidArgument},
	}
	head := logHead(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := s.do(t, tt.req)
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d (body %s)", resp.StatusCode, tt.status, body)
			}
			if got := decode[contract.Error](t, body); got.Code != tt.code || got.Teaching == "" {
				t.Errorf("error = %+v, want code %q with a teaching sentence", got, tt.code)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy = %q, want script-src 'self'", csp)
			}
			if h := logHead(t, s); h != head {
				t.Errorf("a refused request wrote to the log: head %d, was %d", h, head)
			}
		})
	}
	as, err := s.a.Directory().Agents(ctx, mustCaller(t, s), "default")
	if err != nil || len(as) != 1 {
		t.Errorf("agents after refusals = %d (%v), want only the first", len(as), err)
	}
}

func mustCaller(t testing.TB, s *testServer) identity.Caller {
	t.Helper()
	c, err := s.a.Directory().Authenticate(t.Context(), identity.Token(s.token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func logHead(t testing.TB, s *testServer) int64 {
	t.Helper()
	h, err := s.st.Head(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	return h.Seq
}

func TestServer_CookieSession(t *testing.T) {
	s := newTestServer(t, console.Config{})
	resp, body := s.do(t, request{method: "POST", path: "/api/v1/sessions/cookie", body: `{"name":"ada","passphrase":"` + testPassphrase + `"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("cookie login = %d %s", resp.StatusCode, body)
	}
	created := decode[contract.SessionCreated](t, body)
	if created.Token != "" {
		t.Error("a cookie login sent the session token in the body, where script can read it")
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "docket_session" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie = %+v, want HttpOnly and SameSite=Strict", cookie)
	}
	resp, body = s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", cookie: cookie.Value,
		body: `{"name":"calc"}`, header: map[string]string{"X-CSRF-Token": created.CSRFToken}})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("write with cookie and CSRF token = %d %s", resp.StatusCode, body)
	}
	// Reads need no CSRF token.
	resp, body = s.do(t, request{method: "GET", path: "/api/v1/whoami", cookie: cookie.Value})
	if resp.StatusCode != http.StatusOK || decode[contract.Whoami](t, body).Name != "ada" {
		t.Fatalf("whoami with cookie = %d %s", resp.StatusCode, body)
	}
	resp, _ = s.do(t, request{method: "DELETE", path: "/api/v1/sessions/current", cookie: cookie.Value, header: map[string]string{"X-CSRF-Token": created.CSRFToken}})
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout = %d", resp.StatusCode)
	}
	resp, body = s.do(t, request{method: "GET", path: "/api/v1/whoami", cookie: cookie.Value})
	if resp.StatusCode != http.StatusUnauthorized || decode[contract.Error](t, body).Code != contract.CodeCredentialRevoked {
		t.Errorf("whoami after logout = %d %s, want 401 credential_revoked", resp.StatusCode, body)
	}
}

func TestServer_Pagination(t *testing.T) {
	s := newTestServer(t, console.Config{})
	for _, name := range []string{"a", "b", "c"} {
		if resp, body := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: s.token, body: `{"name":"` + name + `"}`}); resp.StatusCode != 201 {
			t.Fatalf("create agent %s = %d %s", name, resp.StatusCode, body)
		}
	}
	var names []string
	cursor, pages := "", 0
	for {
		_, body := s.do(t, request{method: "GET", path: "/api/v1/projects/default/agents?limit=2&after=" + url.QueryEscape(cursor), bearer: s.token})
		p := decode[contract.Page[contract.Agent]](t, body)
		pages++
		for _, a := range p.Items {
			names = append(names, a.Name)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if pages != 2 || len(names) != 3 {
		t.Errorf("paged %d agents in %d pages, want 3 in 2: %v", len(names), pages, names)
	}
}

func TestServer_EventStream(t *testing.T) {
	s := newTestServer(t, console.Config{})
	tests := []struct {
		name    string
		path    string
		header  map[string]string
		firstID string
	}{
		{"from the start", "/api/v1/events?project=default", nil, "1"},
		{"after=1", "/api/v1/events?project=default&after=1", nil, "2"},
		{"Last-Event-ID wins", "/api/v1/events?project=default&after=0", map[string]string{"Last-Event-ID": "2"}, "3"},
	}
	// The log holds project.created and member.created; add one more so that every
	// case has an event to read.
	if resp, body := s.do(t, request{method: "POST", path: "/api/v1/projects/default/agents", bearer: s.token, body: `{"name":"calc"}`}); resp.StatusCode != 201 {
		t.Fatalf("create agent = %d %s", resp.StatusCode, body)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), "GET", s.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+s.token)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type = %q", ct)
			}
			id, _ := readSSE(t, bufio.NewReader(resp.Body))
			if id != tt.firstID {
				t.Errorf("first event id = %q, want %q", id, tt.firstID)
			}
		})
	}
}

// readSSE reads one server-sent event and returns its id and data.
func readSSE(t testing.TB, r *bufio.Reader) (id, data string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && id != "":
			return id, data
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}
