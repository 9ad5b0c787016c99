package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
	"github.com/docketrun/docket/internal/telemetry"
)

// fixture is a gateway over a real authority on SQLite with member ada, an installed
// test capability and one Agent.
type fixture struct {
	st     store.Store
	count  *storecount.Store // the SQLite store beneath st, counted
	a      *authority.Authority
	ops    *authority.Operations
	admin  identity.Caller
	agent  identity.Caller
	token  string
	url    string
	gw     *gateway.Gateway
	server *httptest.Server
	worker *authoritytest.Worker // plays the worker of the test capability's fetch
}

func newFixture(t testing.TB, hold time.Duration) *fixture { return newObservedFixture(t, hold, nil) }

// newObservedFixture is newFixture wired as docket serve wires its telemetry, when tel
// is not nil: the store's appends timed, the MCP middleware and the HTTP wrapper.
func newObservedFixture(t testing.TB, hold time.Duration, tel *telemetry.Telemetry) *fixture {
	t.Helper()
	return newConfiguredFixture(t, fixtureConfig{ops: operation.Config{HoldBound: hold}, tel: tel})
}

// newBenchFixture is newObservedFixture with the bound on each Agent's writes per minute
// lifted, as docket serve --max-writes-per-minute lifts it: a benchmark's Agent writes
// thousands of times a minute, which the bound is there to refuse (docs/security.md,
// "Bounds").
func newBenchFixture(b *testing.B, hold time.Duration, tel *telemetry.Telemetry) *fixture {
	b.Helper()
	return newConfiguredFixture(b, fixtureConfig{ops: operation.Config{HoldBound: hold, MaxWritesPerMinute: 1 << 30}, tel: tel})
}

// fixtureConfig is how newConfiguredFixture builds a fixture.
type fixtureConfig struct {
	ops  operation.Config
	tel  *telemetry.Telemetry            // nil: no telemetry
	now  func() time.Time                // the authority's clock; nil: time.Now
	wrap func(http.Handler) http.Handler // wraps the server's handler; nil: none
}

// newConfiguredFixture is newObservedFixture as cfg says.
func newConfiguredFixture(t testing.TB, cfg fixtureConfig) *fixture {
	t.Helper()
	tel := cfg.tel
	ctx := context.Background()
	sqlSt, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlSt.Close() })
	count := storecount.Wrap(sqlSt)
	var st store.Store = count
	var mw []mcp.Middleware
	if tel != nil {
		st, mw = tel.Store(count), []mcp.Middleware{tel.MCP}
	}
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{1, 2, 3}, Now: cfg.now})
	a := p.A
	f := &fixture{st: st, count: count, a: a, admin: p.Admin}
	files := map[string]string{}
	for _, name := range []string{"capability.toml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "gw", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	if _, err := a.InstallCapability(ctx, f.admin, "default", contract.CapabilityUpload{Files: files}); err != nil {
		t.Fatalf("InstallCapability: %v", err)
	}
	tok, err := a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatalf("CreateAgent: %v", err)
	}
	f.token = tok.Token
	if f.agent, err = a.Directory().Authenticate(ctx, identity.Token(tok.Token)); err != nil {
		t.Fatal(err)
	}
	f.ops = authority.NewOperations(a, cfg.ops)
	f.gw = gateway.New(gateway.Config{Auth: a.Directory(), Ops: f.ops, Strips: f.ops.Operations(), Pins: a, Middleware: mw})
	mux := http.NewServeMux()
	mux.Handle("/mcp", f.gw)
	var h http.Handler = mux
	if tel != nil {
		h = tel.HTTP(mux)
	}
	if cfg.wrap != nil {
		h = cfg.wrap(h)
	}
	// The server speaks HTTP/1.1 and HTTP/2 without TLS, as docket serve does.
	f.server = httptest.NewUnstartedServer(h)
	f.server.Config.Protocols = new(http.Protocols)
	f.server.Config.Protocols.SetHTTP1(true)
	f.server.Config.Protocols.SetUnencryptedHTTP2(true)
	f.server.Start()
	t.Cleanup(f.server.Close)
	f.url = f.server.URL + "/mcp"
	f.worker = authoritytest.NewWorker(t, a, f.admin, f.ops, fetchWorker(""))
	return f
}

// fetchWorker is the options of a test worker of test.fetch@1 on the Connection named
// connection ("" for the default).
func fetchWorker(connection string) authoritytest.WorkerOptions {
	return authoritytest.WorkerOptions{Connection: connection,
		Sources: []contract.Source{{Name: "workspace", Type: "file", Words: []string{"fetched"}, Tier: contract.TierAttested}},
		Tools: []contract.ToolDescriptor{{Tool: "test.fetch@1", Digest: fetchDigest, Adapter: "run",
			AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"file"}}},
	}
}

// fetchDigest is the digest test.fetch@1 is locked at and advertised with.
const fetchDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect returns an SDK client session of the fixture's Agent.
func (f *fixture) connect(t testing.TB, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return f.connectAs(t, f.token, opts)
}

func (f *fixture) connectAs(t testing.TB, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: f.url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: contract.ProtocolVersion})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls tool with args and returns the decoded ToolResult and host metadata.
func call(t testing.TB, cs *mcp.ClientSession, tool string, args any) (contract.ToolResult, contract.HostMeta) {
	t.Helper()
	res, err := callErr(cs, tool, args)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return decodeResult(t, res)
}

func callErr(cs *mcp.ClientSession, tool string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(raw)})
}

func decodeResult(t testing.TB, res *mcp.CallToolResult) (contract.ToolResult, contract.HostMeta) {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content blocks, want 1", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(text.Text), &tr); err != nil {
		t.Fatalf("decode result %s: %v", text.Text, err)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var tr2 contract.ToolResult
	if err := json.Unmarshal(sc, &tr2); err != nil {
		t.Fatalf("decode structuredContent: %v", err)
	}
	var a, b any
	json.Unmarshal([]byte(text.Text), &a)
	json.Unmarshal(sc, &b)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("structuredContent differs from the text block (-text +structured):\n%s", diff)
	}
	var meta contract.HostMeta
	if m, ok := res.Meta[contract.MetaKey]; ok {
		raw, _ := json.Marshal(m)
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Fatalf("decode _meta: %v", err)
		}
	}
	return tr, meta
}

func str(s string) contract.Value { return contract.StringValue(s) }
