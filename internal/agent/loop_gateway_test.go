package agent_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// testCapability has a Board-only Action (note), one that needs a person (mark) and one
// that runs on a worker (fetch).
//
//go:embed testdata/loop.toml
var testCapability string

// authorityRig is a real authority on SQLite with its MCP gateway on httptest.
type authorityRig struct {
	auth  *authority.Authority
	ops   *authority.Operations
	admin identity.Caller
	agent identity.Caller
	token string
	url   string // the gateway
	api   string // the authority's root, serving /api/v1 and /mcp
	// store keeps the conversations in the authority, as the runtime does against docket
	// serve; a restarted runtime gets its own with newStore.
	store *agent.AuthorityConversations
	// fetcher plays the worker of the test capability's fetch, from the first settle on.
	fetcher *authoritytest.Worker
	db      string // the SQLite file of the authority's store
}

// newStore is a fresh authority-backed conversation store, as a restarted runtime has.
func (r *authorityRig) newStore() *agent.AuthorityConversations {
	return &agent.AuthorityConversations{API: &apiclient.Client{URL: r.api, Token: r.token}}
}

func newAuthorityRig(t *testing.T, hold time.Duration) *authorityRig {
	t.Helper()
	return newAuthorityRigWith(t, hold, map[string]string{"capability.toml": testCapability})
}

// newAuthorityRigWith installs the capability made of files.
func newAuthorityRigWith(t *testing.T, hold time.Duration, files map[string]string) *authorityRig {
	t.Helper()
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "docket.db")
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{7}})
	a := p.A
	r := &authorityRig{auth: a, db: db, admin: p.Admin}
	if _, err := a.InstallCapability(ctx, r.admin, "default", contract.CapabilityUpload{Files: files}); err != nil {
		t.Fatalf("InstallCapability: %v", err)
	}
	tok, err := a.Directory().CreateAgent(ctx, r.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatalf("CreateAgent: %v", err)
	}
	r.token = tok.Token
	if r.agent, err = a.Directory().Authenticate(ctx, identity.Token(tok.Token)); err != nil {
		t.Fatal(err)
	}
	r.ops = authority.NewOperations(a, operation.Config{HoldBound: hold})
	api, err := console.New(console.Config{Identity: a.Directory(), Authority: a, Routes: map[string]http.Handler{"/mcp": gateway.New(gateway.Config{Auth: a.Directory(), Ops: r.ops, Strips: r.ops.Operations()})}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	r.url, r.api = srv.URL+"/mcp", srv.URL
	r.store = r.newStore()
	return r
}

// testDigest is the digest the rigs' Tools are locked at and advertised with.
const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// worker plays a worker whose file Source "workspace" attests words, for tools.
func (r *authorityRig) worker(t *testing.T, words []string, tools ...contract.ToolID) *authoritytest.Worker {
	t.Helper()
	o := authoritytest.WorkerOptions{Sources: []contract.Source{{Name: "workspace", Type: "file", Words: words, Tier: contract.TierAttested}}}
	for _, tool := range tools {
		o.Tools = append(o.Tools, contract.ToolDescriptor{Tool: tool, Digest: testDigest, Adapter: "workspace",
			AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"file"}})
	}
	return authoritytest.NewWorker(t, r.auth, r.admin, r.ops, o)
}

// settle reports a worker's outcome for the agent's operation ordinal of the test
// capability's fetch.
func (r *authorityRig) settle(t *testing.T, ordinal int64, path string) {
	t.Helper()
	if r.fetcher == nil {
		r.fetcher = r.worker(t, []string{"fetched"}, "test.fetch@1")
	}
	r.fetcher.Settle(t, r.agent.ID, ordinal, contract.Args{"path": contract.StringValue(path)})
}

// approveAll approves every pending Request as the member.
func (r *authorityRig) approveAll(t *testing.T) {
	t.Helper()
	reqs, err := r.ops.Operations().Requests(context.Background(), r.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs {
		if q.State == contract.RequestPending {
			if _, err := r.ops.Operations().Decide(context.Background(), r.admin, "default", q.ID, contract.Decision{Digest: q.Digest, Verdict: contract.VerdictApprove}); err != nil {
				t.Errorf("Decide: %v", err)
			}
		}
	}
}

// hookGateway runs onStrip before the first strip is asked, to act "while the call is held".
type hookGateway struct {
	agent.Gateway
	once    sync.Once
	onStrip func()
}

func (h *hookGateway) Strip(ctx context.Context) ([]contract.OperationSlot, error) {
	h.once.Do(h.onStrip)
	return h.Gateway.Strip(ctx)
}

// hookProvider runs before[n] before the model's turn n (from 1).
type hookProvider struct {
	agent.Provider
	n      int
	before map[int]func()
}

func (h *hookProvider) Turn(ctx context.Context, req agent.Request, d func(agent.Delta)) (agent.Response, error) {
	h.n++
	if f := h.before[h.n]; f != nil {
		f()
	}
	return h.Provider.Turn(ctx, req, d)
}

func (r *authorityRig) loop(t *testing.T, p agent.Provider, edit func(*agent.LoopConfig)) *agent.Loop {
	t.Helper()
	c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: r.url, Token: r.token})
	if err != nil {
		t.Fatalf("Dial the real gateway: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	cfg := agent.LoopConfig{Provider: p, Gateway: c, Store: r.store, HoldWait: time.Minute, PingEvery: time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	l, err := agent.NewLoop(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// codes returns the errorCode of each tool result of conversation id, "" for accepted.
func codes(t *testing.T, store agent.ConversationStore, id string) []string {
	t.Helper()
	var out []string
	for _, res := range results(t, store, id) {
		code, _, _ := head(t, res)
		out = append(out, string(code))
	}
	return out
}

func TestLoop_RealGateway_Script(t *testing.T) {
	r := newAuthorityRig(t, time.Second)
	p := script(t, `{"turns":[
	  {"calls":[{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"seen","args":{"x":"1"}}}]}}]},
	  {"calls":[{"tool":"ApplyAction","arguments":{"action":"note","params":{"topic":"a"}}},{"tool":"QueryBoard","arguments":{"pattern":{"predicate":"noted","args":{"topic":"?t"}}}}]},
	  {"final":"noted"}]}`)
	out, err := r.loop(t, p, nil).Send(t.Context(), "c1", "note a")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if !strings.HasSuffix(out.Final, "noted") {
		t.Errorf("Final = %q", out.Final)
	}
	if diff := cmp.Diff([]string{"", "", ""}, codes(t, r.store, "c1")); diff != "" {
		t.Errorf("error codes (-want +got):\n%s", diff)
	}
	if res := results(t, r.store, "c1"); !strings.Contains(res[2].Content, `"noted"`) {
		t.Errorf("QueryBoard after the note = %s, want the noted fact", res[2].Content)
	}
}

// wakeAfterWait sends "go" in conversation c1, whose first call is left waiting: the
// scripted model ends its turn on it, so the run ends with the call pending, as a task
// waiting. The outcome has come by then (the test's hook settles or approves it before the
// second model turn), and the runtime's wake shows it and runs the script on.
func wakeAfterWait(t *testing.T, l *agent.Loop) {
	t.Helper()
	out, err := l.Send(t.Context(), "c1", "go")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if len(out.Pending) != 1 || !strings.Contains(out.Final, "ends its turn") {
		t.Fatalf("Send = %+v, want the run ended on the waiting call", out)
	}
	if out, err = l.Wake(t.Context(), "c1", "wake:1"); err != nil || len(out.Pending) != 0 || !strings.HasSuffix(out.Final, "ok") {
		t.Fatalf("Wake = %+v, %v; want the script played to its end", out, err)
	}
}

func TestLoop_RealGateway_HeldCalls(t *testing.T) {
	fetch := `{"tool":"ApplyAction","arguments":{"action":"fetch","params":{"path":"a.txt"}}}`
	write := `{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"seen","args":{"x":"1"}}}]}}`

	t.Run("settles while held", func(t *testing.T) {
		r := newAuthorityRig(t, 20*time.Millisecond) // the gateway answers running at its bound
		p := script(t, `{"turns":[{"calls":[`+fetch+`]},{"calls":[`+write+`]},{"final":"ok"}]}`)
		l := r.loop(t, p, func(c *agent.LoopConfig) {
			c.Gateway = &hookGateway{Gateway: c.Gateway, onStrip: func() { r.settle(t, 1, "a.txt") }}
		})
		if _, err := l.Send(t.Context(), "c1", "go"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		res := results(t, r.store, "c1")
		if _, state, result := head(t, res[0]); state != string(contract.OpDone) || !strings.Contains(result, "rows") {
			t.Errorf("the held fetch reached the model as %s with result %s; want done with its rows", state, result)
		}
		// The runtime delivered the outcome, so the next write is not refused.
		if diff := cmp.Diff([]string{"", ""}, codes(t, r.store, "c1")); diff != "" {
			t.Errorf("error codes (-want +got):\n%s", diff)
		}
	})

	t.Run("at the bound, then shown unread", func(t *testing.T) {
		r := newAuthorityRig(t, 20*time.Millisecond)
		p := &hookProvider{Provider: script(t, `{"turns":[{"calls":[`+fetch+`]},{"calls":[{"tool":"QueryBoard"}]},{"calls":[`+write+`]},{"final":"ok"}]}`),
			before: map[int]func(){2: func() { r.settle(t, 1, "a.txt") }}}
		rec := &turnRecorder{Provider: p}
		l := r.loop(t, rec, func(c *agent.LoopConfig) { c.HoldWait = 10 * time.Millisecond })
		wakeAfterWait(t, l)
		res := results(t, r.store, "c1")
		if _, state, _ := head(t, res[0]); state != string(contract.OpRunning) {
			t.Errorf("at the bound the model read %s, want running", state)
		}
		reqs := rec.requests()
		last := reqs[2].Messages[len(reqs[2].Messages)-1]
		if !strings.Contains(last.Text, "outcomes you have not read") || !strings.Contains(last.Text, `"state":"done"`) {
			t.Errorf("the turn after the outcome was shown %q, want the unread outcome", last.Text)
		}
		if diff := cmp.Diff([]string{"", "", ""}, codes(t, r.store, "c1")); diff != "" {
			t.Errorf("error codes (-want +got):\n%s", diff)
		}
	})

	t.Run("waiting for a decision, then approved", func(t *testing.T) {
		r := newAuthorityRig(t, time.Minute)
		p := &hookProvider{Provider: script(t, `{"turns":[{"calls":[{"tool":"ApplyAction","arguments":{"action":"mark","params":{"topic":"a"}}}]},{"calls":[{"tool":"QueryBoard"}]},{"final":"ok"}]}`),
			before: map[int]func(){2: func() { r.approveAll(t) }}}
		rec := &turnRecorder{Provider: p}
		wakeAfterWait(t, r.loop(t, rec, nil))
		if _, state, _ := head(t, results(t, r.store, "c1")[0]); state != string(contract.OpWaitingForDecision) {
			t.Errorf("the model read %s, want waiting_for_decision at once", state)
		}
		reqs := rec.requests()
		last := reqs[2].Messages[len(reqs[2].Messages)-1]
		if !strings.Contains(last.Text, `"state":"done"`) {
			t.Errorf("after the approval the model was shown %q, want the outcome", last.Text)
		}
	})

	// A call held past the bound stops its turn: the turn's other calls are not sent, so
	// the write gate never has to refuse one (it once did, with operation_running).
	t.Run("a held call stops the turn before the write gate", func(t *testing.T) {
		r := newAuthorityRig(t, 20*time.Millisecond)
		p := script(t, `{"turns":[{"calls":[`+fetch+`,`+write+`,{"tool":"ApplyAction","arguments":{"action":"note","params":{"topic":"b"}}}]},{"final":"ok"}]}`)
		if _, err := r.loop(t, p, func(c *agent.LoopConfig) { c.HoldWait = 5 * time.Millisecond }).Send(t.Context(), "c1", "go"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		want := []string{"", string(contract.CodeNotExecuted), string(contract.CodeNotExecuted)}
		if diff := cmp.Diff(want, codes(t, r.store, "c1")); diff != "" {
			t.Errorf("error codes (-want +got):\n%s", diff)
		}
	})
}

func TestLoop_RealGateway_ResumesAfterAKillWithoutResending(t *testing.T) {
	r := newAuthorityRig(t, 20*time.Millisecond)
	rec := script(t, `{"turns":[{"calls":[{"tool":"ApplyAction","arguments":{"action":"fetch","params":{"path":"a.txt"}}},{"tool":"QueryBoard"}]},{"final":"ok"}]}`)

	// The first runtime is killed while it keeps the running fetch open.
	ctx, kill := context.WithCancel(t.Context())
	l := r.loop(t, rec, func(c *agent.LoopConfig) {
		c.Gateway = &hookGateway{Gateway: c.Gateway, onStrip: kill}
	})
	if _, err := l.Send(ctx, "c1", "go"); err == nil {
		t.Fatal("the killed run ended without an error")
	}
	r.settle(t, 1, "a.txt")

	// A new runtime (a new session, which replaces the dead one, and a store that knows
	// only what the authority kept) resumes the conversation.
	r.store = r.newStore()
	if _, err := r.loop(t, rec, nil).Send(t.Context(), "c1", ""); err != nil {
		t.Fatalf("resumed Send: %v", err)
	}
	want := []string{string(contract.CodeOutcomeUnknown), string(contract.CodeNotExecuted)}
	if diff := cmp.Diff(want, codes(t, r.store, "c1")); diff != "" {
		t.Errorf("error codes (-want +got):\n%s", diff)
	}
	reqs := rec.requests()
	last := reqs[len(reqs)-1].Messages
	if text := last[len(last)-1].Text; !strings.Contains(text, `"state":"done"`) || !strings.Contains(text, "rows") {
		t.Errorf("the resumed turn was shown %q; want the fetch's outcome it had not read", text)
	}
	c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: r.url, Token: r.token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	strip, err := c.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	fetches := 0
	for _, op := range strip {
		if op.Tool == "ApplyAction" {
			fetches++
		}
	}
	if fetches != 1 {
		t.Errorf("the authority holds %d ApplyAction operations, want 1: nothing is re-sent", fetches)
	}
}

// TestLoop_RealGateway_ViewOnlyWhenChanged: the real gateway names a View the model was
// already shown as unchanged, sends what changed when the Board changed (the runtime
// applies View deltas), and sends it whole again when the model holds only part of it (a
// result cut to the output limit). A model that applies the deltas it is shown to the
// View it was shown ends with exactly the View the gateway holds for it: the digest the
// next answer names unchanged.
func TestLoop_RealGateway_ViewOnlyWhenChanged(t *testing.T) {
	const turns = `{"turns":[
	  {"calls":[{"tool":"QueryBoard","arguments":{}}]},
	  {"calls":[{"tool":"QueryBoard","arguments":{}}]},
	  {"calls":[{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"seen","args":{"x":"1"}}}]}}]},
	  {"calls":[{"tool":"QueryBoard","arguments":{}}]},
	  {"final":"done"}]}`
	type shown struct {
		View          json.RawMessage     `json:"view"`
		ViewUnchanged string              `json:"viewUnchanged"`
		ViewDelta     *contract.ViewDelta `json:"viewDelta"`
	}
	cases := []struct {
		name  string
		limit int // the Bounder's; 0 is the default
		// want says, for each result, how it carries the View: "full", "unchanged" or "delta".
		want []string
	}{
		{"whole results", 0, []string{"full", "unchanged", "delta", "unchanged"}},
		{"results cut", agent.MinOutputLimit, []string{"full", "full", "full", "full"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newAuthorityRig(t, time.Second)
			l := r.loop(t, script(t, turns), func(cfg *agent.LoopConfig) { cfg.Bounder.Limit = tc.limit })
			if _, err := l.Send(t.Context(), "c1", "look twice"); err != nil {
				t.Fatalf("Send: %v", err)
			}
			var got []string
			var held contract.View // the View the model was shown, with the deltas it was shown applied
			var heldDigest contract.Digest
			for i, res := range results(t, r.store, "c1") {
				if tc.limit != 0 {
					switch {
					case strings.Contains(res.Content, `"viewUnchanged"`):
						got = append(got, "unchanged")
					case strings.Contains(res.Content, `"viewDelta"`):
						got = append(got, "delta")
					default:
						got = append(got, "full")
					}
					continue
				}
				var s shown
				if err := json.Unmarshal([]byte(res.Content), &s); err != nil {
					t.Fatalf("result %d: %v\n%s", i, err, res.Content)
				}
				switch {
				case s.ViewUnchanged != "":
					got = append(got, "unchanged")
					if s.ViewUnchanged != heldDigest.String() {
						t.Errorf("result %d names View %s unchanged; the model holds %s", i, s.ViewUnchanged, heldDigest)
					}
				case s.ViewDelta != nil:
					got = append(got, "delta")
					if s.ViewDelta.From != heldDigest {
						t.Errorf("result %d is a delta from %s; the model holds %s", i, s.ViewDelta.From, heldDigest)
					}
					v, err := s.ViewDelta.Apply(held)
					if err != nil {
						t.Fatalf("result %d: the delta does not apply to the View the model holds: %v", i, err)
					}
					held = v
					if heldDigest, err = contract.ViewDigest(held); err != nil {
						t.Fatal(err)
					}
				default:
					got = append(got, "full")
					held = decodeView(t, s.View)
					d, err := contract.ViewDigest(held)
					if err != nil {
						t.Fatal(err)
					}
					heldDigest = d
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("how each result carries the View (-want +got):\n%s", diff)
			}
		})
	}
}

func decodeView(t *testing.T, raw json.RawMessage) contract.View {
	t.Helper()
	var v contract.View
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode View: %v", err)
	}
	return v
}

// wireTap keeps every response body that passed through it, to see what the gateway sent
// on the wire rather than what the runtime handed its model.
type wireTap struct {
	next http.RoundTripper
	mu   sync.Mutex
	got  strings.Builder
}

func (w *wireTap) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := w.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	res.Body = tapBody{ReadCloser: res.Body, w: w}
	return res, nil
}

func (w *wireTap) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.String()
}

type tapBody struct {
	io.ReadCloser
	w *wireTap
}

func (b tapBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.mu.Lock()
	b.w.got.Write(p[:n])
	b.w.mu.Unlock()
	return n, err
}

// TestLoop_RealGateway_StripOnlyWhenChanged: the runtime names the strip of Operations it
// holds, so the real gateway names an unchanged strip instead of sending it again; the
// runtime gives it back, so the model reads every result with its strip, as before.
func TestLoop_RealGateway_StripOnlyWhenChanged(t *testing.T) {
	const turns = `{"turns":[
	  {"calls":[{"tool":"ApplyBatch","arguments":{"operations":[{"op":"assert_fact","atom":{"predicate":"seen","args":{"x":"1"}}}]}}]},
	  {"calls":[{"tool":"QueryBoard","arguments":{}}]},
	  {"calls":[{"tool":"QueryBoard","arguments":{}}]},
	  {"final":"done"}]}`
	r := newAuthorityRig(t, time.Second)
	tap := &wireTap{next: http.DefaultTransport}
	c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: r.url, Token: r.token, HTTP: &http.Client{Transport: tap}})
	if err != nil {
		t.Fatalf("Dial the real gateway: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	l, err := agent.NewLoop(agent.LoopConfig{Provider: script(t, turns), Gateway: c, Store: r.store, HoldWait: time.Minute, PingEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Send(t.Context(), "c1", "write, then look twice"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	var strips []json.RawMessage
	for i, res := range results(t, r.store, "c1") {
		var shown struct {
			Operations          json.RawMessage `json:"operations"`
			OperationsUnchanged string          `json:"operationsUnchanged"`
		}
		if err := json.Unmarshal([]byte(res.Content), &shown); err != nil {
			t.Fatalf("result %d: %v\n%s", i, err, res.Content)
		}
		if shown.Operations == nil || shown.OperationsUnchanged != "" {
			t.Errorf("result %d was shown without its strip:\n%s", i, res.Content)
		}
		strips = append(strips, shown.Operations)
	}
	if len(strips) != 3 {
		t.Fatalf("%d results, want 3", len(strips))
	}
	if string(strips[1]) != string(strips[2]) {
		t.Errorf("the two QueryBoards were shown different strips:\n%s\n%s", strips[1], strips[2])
	}
	// The runtime reads the text block alone and says so, so the answers carry the
	// ToolResult only there, its quotes escaped (docs/mcp.md, "Result shape").
	if n := strings.Count(tap.String(), `\"operationsUnchanged\"`); n != 1 {
		t.Errorf("the gateway named the strip unchanged %d times on the wire, want once (the second QueryBoard)", n)
	}
	if strings.Contains(tap.String(), `"structuredContent"`) {
		t.Error("the gateway sent structuredContent to the runtime, which reads the text block alone")
	}
}
