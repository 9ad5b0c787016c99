package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/workhop"
)

// endedWithin bounds how long a test waits for a held stream to end after its credential
// did. The holds end it within authority.RecheckEvery; a stream that stays open this long
// was not ended at all (every stream here would otherwise stay open for minutes).
const endedWithin = 30 * time.Second

// serve is one docket serve of a test: the console with its /mcp gateway and /work hop,
// over an authority of its own.
type serve struct {
	*httptest.Server
	a   *authority.Authority
	ops *authority.Operations
}

// twoServes is two serves over one store, as two `docket serve` over one SQLite file or
// one PostgreSQL database, and the member token of "ada" in project "default".
type twoServes struct {
	first, second serve
	member        string
	clock         *authoritytest.Clock
}

// newTwoServes starts two serves over one store: the SQLite file of a temporary data
// dir, or a fresh PostgreSQL database when postgresStore is set (and DOCKET_TEST_POSTGRES
// names a server; skipped otherwise).
func newTwoServes(t *testing.T, postgresStore bool) *twoServes {
	t.Helper()
	stores := []store.Store{}
	if postgresStore {
		dsn := authoritytest.PostgresDSN(t)
		for range 2 {
			st, err := postgres.Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			stores = append(stores, st)
		}
	} else {
		path := filepath.Join(t.TempDir(), "docket.db")
		for range 2 {
			st, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			stores = append(stores, st)
		}
	}
	ts := &twoServes{clock: authoritytest.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))}
	var serves []serve
	for i, st := range stores {
		o := authoritytest.Options{Store: st, Key: identity.Key{1}, Now: ts.clock.Now}
		var a *authority.Authority
		if i == 0 {
			p := authoritytest.New(t, o)
			a, ts.member = p.A, p.Token.String()
		} else {
			a = authoritytest.Bare(t, o)
		}
		// Calls are held and polls wait far longer than the test does, so only the end of
		// their credential can end them in time.
		ops := authority.NewOperations(a, operation.Config{HoldBound: time.Hour})
		disp := authority.NewDispatcher(ops, operation.DispatcherConfig{PollWait: time.Hour})
		hop, err := workhop.New(workhop.Config{Identity: a.Directory(), Dispatcher: disp})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := console.New(console.Config{Identity: a.Directory(), Authority: a, Requests: ops.Operations(), Operations: ops, Reconciler: disp, Policies: a, Recovery: ops.Operations(), Cards: ops, Hooks: ops.Operations(),
			Routes: map[string]http.Handler{
				"/mcp":       gateway.New(gateway.Config{Auth: a.Directory(), Ops: ops, Strips: ops.Operations()}),
				"POST /work": hop,
			}})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		serves = append(serves, serve{Server: hs, a: a, ops: ops})
	}
	ts.first, ts.second = serves[0], serves[1]
	return ts
}

// call sends one request to s and returns its status and body.
func (s serve) call(t *testing.T, method, path, bearer, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// must is call, failing the test unless s answers status want.
func (s serve) must(t *testing.T, want int, method, path, bearer, body string) []byte {
	t.Helper()
	status, b := s.call(t, method, path, bearer, body)
	if status != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, status, b, want)
	}
	return b
}

// held is a stream or long-poll open on a serve: ended delivers once how it ended.
type held struct {
	ended <-chan string
}

// openEvents opens the event stream of project default on s with bearer and reads it
// until it ends.
func openEvents(t *testing.T, s *httptest.Server, bearer string) held {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api/v1/events?project=default", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream = %d, want 200", resp.StatusCode)
	}
	ended := make(chan string, 1) // written once by the reading goroutine
	go func() {
		rd := bufio.NewReader(resp.Body)
		for {
			if _, err := rd.ReadString('\n'); err != nil {
				ended <- "stream closed"
				return
			}
		}
	}()
	return held{ended: ended}
}

// openPoll sends a long-poll to s and delivers its status and error code once it answers.
func openPoll(t *testing.T, s serve, path, bearer, body string) held {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	ended := make(chan string, 1) // written once by the polling goroutine
	go func() {
		resp, err := s.Client().Do(req)
		if err != nil {
			ended <- err.Error()
			return
		}
		defer resp.Body.Close()
		var e struct {
			Code contract.Code `json:"errorCode"`
		}
		b, err := io.ReadAll(resp.Body)
		if err == nil {
			err = json.Unmarshal(b, &e)
		}
		if err != nil {
			ended <- fmt.Sprintf("%d, unreadable: %v", resp.StatusCode, err)
			return
		}
		ended <- fmt.Sprintf("%d %s", resp.StatusCode, e.Code)
	}()
	return held{ended: ended}
}

// TestHolds_CredentialEndsItsStreams: revoking or expiring a credential ends every stream
// and long-poll it holds, at once, also when the stream is held on one serve and the
// credential is revoked through another over the same store (docs/security.md,
// "Credentials and streams"); a stream of another credential stays open.
func TestHolds_CredentialEndsItsStreams(t *testing.T) {
	backends := []struct {
		name     string
		postgres bool
	}{{"sqlite", false}, {"postgres", true}}
	cases := []struct {
		name string
		// open sets up a credential on ts and holds a stream with it on ts.first; it
		// returns what ends the credential (through ts.second) and the end the stream
		// must see ("stream closed", or a long-poll's status and code).
		open func(t *testing.T, ts *twoServes) (held, func(), string)
	}{
		{"session signed out on the other serve", func(t *testing.T, ts *twoServes) (held, func(), string) {
			tok := login(t, ts)
			return openEvents(t, ts.first.Server, tok), func() {
				ts.second.must(t, http.StatusNoContent, "DELETE", "/api/v1/sessions/current", tok, "")
			}, "stream closed"
		}},
		{"session expired", func(t *testing.T, ts *twoServes) (held, func(), string) {
			return openEvents(t, ts.first.Server, login(t, ts)), func() { ts.clock.Add(identity.DefaultSessionTTL + time.Minute) }, "stream closed"
		}},
		{"delegate revoked on the other serve", func(t *testing.T, ts *twoServes) (held, func(), string) {
			tok := delegate(t, ts, "8h")
			return openEvents(t, ts.first.Server, tok), func() {
				ts.second.must(t, http.StatusOK, "DELETE", "/api/v1/delegates/asst", ts.member, "")
			}, "stream closed"
		}},
		{"delegate's life ended", func(t *testing.T, ts *twoServes) (held, func(), string) {
			return openEvents(t, ts.first.Server, delegate(t, ts, "1m")), func() { ts.clock.Add(2 * time.Minute) }, "stream closed"
		}},
		{"agent revoked on the other serve: its task long-poll", func(t *testing.T, ts *twoServes) (held, func(), string) {
			tok := agentToken(t, ts)
			return openPoll(t, ts.first, "/api/v1/tasks/claim", tok, `{"waitMs":60000}`), func() {
				ts.second.must(t, http.StatusOK, "DELETE", "/api/v1/projects/default/agents/calc", ts.member, "")
			}, "401 credential_revoked"
		}},
		{"agent token rotated on the other serve: its task long-poll", func(t *testing.T, ts *twoServes) (held, func(), string) {
			tok := agentToken(t, ts)
			return openPoll(t, ts.first, "/api/v1/tasks/claim", tok, `{"waitMs":60000}`), func() {
				ts.second.must(t, http.StatusOK, "POST", "/api/v1/projects/default/agents/calc/token", ts.member, "")
			}, "401 unauthenticated" // a replaced token proves nothing, as an unknown one
		}},
		{"agent revoked on the other serve: its call held at /mcp", func(t *testing.T, ts *twoServes) (held, func(), string) {
			return heldCall(t, ts), func() {
				ts.second.must(t, http.StatusOK, "DELETE", "/api/v1/projects/default/agents/calc", ts.member, "")
			}, string(contract.CodeCredentialRevoked)
		}},
		{"connection revoked on the other serve: its worker's /work poll", func(t *testing.T, ts *twoServes) (held, func(), string) {
			key := decode[contract.ConnectionKey](t, ts.first.must(t, http.StatusCreated, "POST", "/api/v1/projects/default/connections", ts.member, `{"name":"repo"}`)).Key
			ans := decode[contract.WorkAnswer](t, ts.first.must(t, http.StatusOK, "POST", "/work", key, `{"operation":{"kind":"Poll","workerId":"wkr-1","tools":[]}}`))
			if ans.Lease == nil {
				t.Fatalf("startup poll = %+v, want a lease", ans)
			}
			poll := fmt.Sprintf(`{"operation":{"kind":"Poll","workerId":"wkr-1","workerGeneration":%d,"tools":[]}}`, ans.Lease.Generation)
			return openPoll(t, ts.first, "/work", key, poll), func() {
				ts.second.must(t, http.StatusOK, "DELETE", "/api/v1/projects/default/connections/repo", ts.member, "")
			}, "401 credential_revoked"
		}},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					ts := newTwoServes(t, be.postgres)
					other := openEvents(t, ts.first.Server, ts.member)
					h, end, want := tc.open(t, ts)
					select {
					case got := <-h.ended:
						t.Fatalf("the stream ended before its credential did: %s", got)
					default:
					}
					end()
					select {
					case got := <-h.ended:
						if got != want {
							t.Errorf("the stream ended with %q, want %q", got, want)
						}
					case <-time.After(endedWithin):
						t.Fatalf("the stream was still open %v after its credential ended", endedWithin)
					}
					select {
					case got := <-other.ended:
						t.Errorf("another credential's stream ended too: %s", got)
					default:
					}
				})
			}
		})
	}
}

// login opens a session of ada on the first serve.
func login(t *testing.T, ts *twoServes) string {
	t.Helper()
	sess, err := ts.first.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sess.Token.String()
}

// delegate creates ada's delegate "asst" of life and returns its credential.
func delegate(t *testing.T, ts *twoServes, life string) string {
	t.Helper()
	b := ts.first.must(t, http.StatusCreated, "POST", "/api/v1/projects/default/delegates", ts.member, `{"name":"asst","life":"`+life+`"}`)
	return decode[contract.DelegateToken](t, b).Token
}

// agentToken creates Agent "calc" and returns its token.
func agentToken(t *testing.T, ts *twoServes) string {
	t.Helper()
	b := ts.first.must(t, http.StatusCreated, "POST", "/api/v1/projects/default/agents", ts.member, `{"name":"calc"}`)
	return decode[contract.AgentToken](t, b).Token
}

// heldCall makes Agent "calc" call, at the first serve's /mcp, an Action a worker runs,
// and returns the call once it is held (its worker is set up and never reports): the call
// ends with the JSON-RPC error it is answered, or "answered".
func heldCall(t *testing.T, ts *twoServes) held {
	t.Helper()
	ctx := t.Context()
	admin, err := ts.first.a.Directory().Authenticate(ctx, identity.Token(ts.member))
	if err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(filepath.Join("testdata", "holds", "capability.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.first.a.InstallCapability(ctx, admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": string(toml)}}); err != nil {
		t.Fatal(err)
	}
	authoritytest.NewWorker(t, ts.first.a, admin, ts.first.ops, authoritytest.WorkerOptions{
		Sources: []contract.Source{{Name: "workspace", Type: "file", Words: []string{"fetched"}, Tier: contract.TierAttested}},
		Tools: []contract.ToolDescriptor{{Tool: "test.fetch@1", Digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			Adapter: "run", AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"file"}}},
	})
	progressed := make(chan struct{}, 4) // the gateway's progress notifications: the call is held
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		}})
	tr := &mcp.StreamableClientTransport{Endpoint: ts.first.URL + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{token: agentToken(t, ts), next: http.DefaultTransport}}}
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: contract.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ended := make(chan string, 1) // written once by the calling goroutine
	go func() {
		params := &mcp.CallToolParams{Name: contract.ToolApplyAction, Arguments: contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a.txt")}}}
		params.SetProgressToken("p")
		_, err := cs.CallTool(ctx, params)
		switch {
		case err == nil:
			ended <- "answered"
		case strings.Contains(err.Error(), string(contract.CodeCredentialRevoked)):
			ended <- string(contract.CodeCredentialRevoked)
		default:
			ended <- err.Error()
		}
	}()
	select {
	case <-progressed:
	case got := <-ended:
		t.Fatalf("the call ended before it was held: %s", got)
	}
	return held{ended: ended}
}

// bearerTransport adds an Agent's token to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
