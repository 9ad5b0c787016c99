package e2e

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

//go:embed testdata/capability/peer.toml
var peerCapability string

// peerManifest is hopManifest with the Tool that appends: test.append@1 runs append.sh,
// which appends its arguments (one JSON line) to a file and answers one row.
const peerManifest = `{"format": "docket-worker-tools/1", "tools": {
  "test.append@1": {"adapter": "run", "sourceTypes": ["file"], "entry": "append.sh", "kind": "write", "params": {"n": {"type": "string"}}}
}}`

const appendScript = `#!/bin/sh
{ cat; echo; } >> appended.log
echo '{"n":"1"}'
`

// BenchmarkWorker_EndToEndPeer is BenchmarkWorker_EndToEnd as the peers it is compared
// with are measured: each Agent calls over real HTTP /mcp with the official SDK client
// (its own session), and the Tool writes — it appends a line to a file (a process run by
// the worker's run adapter). In /decided every call needs a decision, which a member
// watching the event stream (GET /api/v1/events) makes at once over the API (POST
// …/requests/{id}/decision). Same metrics as BenchmarkWorker_EndToEnd, and in /decided
// decide-ms, the member's mean wait for a decision's answer, and decide-%, the share of
// the run it spent waiting so: it decides one Request at a time, so near 100% the rate
// is its decisions' latency, not the authority's throughput.
func BenchmarkWorker_EndToEndPeer(b *testing.B) {
	open := map[string]func(b *testing.B) store.Store{
		"sqlite": func(b *testing.B) store.Store {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "docket.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(b *testing.B) store.Store {
			st, err := postgres.Open(b.Context(), pgTestDB(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		},
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, decided := range []bool{false, true} {
			name := backend + "/write"
			if decided {
				name = backend + "/decided"
			}
			b.Run(name, func(b *testing.B) { benchPeer(b, open[backend](b), decided) })
		}
	}
}

func benchPeer(b *testing.B, raw store.Store, decided bool) {
	const agents = 16
	st := storecount.Wrap(raw)
	// Each Agent writes far more often than docket serve lets one in a minute: the
	// bound is lifted, as in BenchmarkWorker_EndToEnd, on the one Operations the
	// worker's hop serves, as in docket serve.
	h := newHopEnvOn(b, st, operation.Config{HoldBound: time.Minute, MaxWritesPerMinute: 1 << 30},
		map[string]string{"capability.toml": peerCapability}, "files", []string{"appended"}, nil)
	writeFile(b, h.man, peerManifest, 0o644)
	writeFile(b, filepath.Join(filepath.Dir(h.man), "append.sh"), appendScript, 0o755)
	h.lock(b, "laptop", "test.append@1")
	ctx := b.Context()
	ops := h.ops
	gw := httptest.NewServer(gateway.New(gateway.Config{Auth: h.a.Directory(), Ops: ops, Strips: ops.Operations(), Pins: h.a}))
	b.Cleanup(gw.Close)
	sessions := make([]*mcp.ClientSession, agents)
	for i := range sessions {
		at, err := h.a.Directory().CreateAgent(ctx, h.admin, "default", contract.CreateAgentRequest{Name: fmt.Sprintf("peer%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: gw.URL, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{token: at.Token, next: http.DefaultTransport}}}
		if sessions[i], err = c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: contract.ProtocolVersion}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sessions[i].Close() })
	}
	w := h.startWorker(b)
	w.waitLine(b, "lease acquired")
	action := "append"
	var member memberTime
	if decided {
		action = "append_decided"
		head, err := raw.Head(ctx, "default")
		if err != nil {
			b.Fatal(err)
		}
		decideCtx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		// The member's console: /api/v1 with its requests routes, as docket serve wires it.
		api, err := console.New(console.Config{Identity: h.a.Directory(), Authority: h.a, Requests: ops.Operations(), Operations: ops})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(api)
		b.Cleanup(srv.Close)
		go func() { done <- decideAll(decideCtx, srv.URL, h.token, head.Seq, &member) }()
		b.Cleanup(func() {
			stop()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				b.Errorf("member deciding: %v", err)
			}
		})
	}
	args, err := json.Marshal(contract.ApplyActionInput{Action: action, Params: contract.Args{"n": contract.StringValue("1")}})
	if err != nil {
		b.Fatal(err)
	}

	st.Reset()
	cpu := cpuTime(b)
	lat, elapsed := runActions(b, len(sessions), func(i int) error { return applyOverMCP(ctx, sessions[i], args) })
	reportLatencies(b, lat, elapsed)
	if n := member.decisions.Load(); n > 0 {
		// The member decides one Request after another, so its decisions bound the rate:
		// the share of the run it spent waiting for them says how far (benchmarks/README.md).
		spent := time.Duration(member.waited.Load())
		b.ReportMetric(float64(spent.Microseconds())/1000/float64(n), "decide-ms")
		b.ReportMetric(100*spent.Seconds()/elapsed.Seconds(), "decide-%")
	}
	reportStoreCounts(b, st.Counts(), len(lat))
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/1000/float64(len(lat)), "cpu-ms/action")
	b.ReportMetric(0, "ns/op")
}

// applyOverMCP calls ApplyAction with args and checks that its Operation is done.
func applyOverMCP(ctx context.Context, cs *mcp.ClientSession, args json.RawMessage) error {
	tr, err := callTool(ctx, cs, contract.ToolApplyAction, args)
	if err != nil {
		return err
	}
	if len(tr.Operations) == 0 {
		return fmt.Errorf("ApplyAction = %s %s, want an Operation", tr.ErrorCode, tr.Teaching)
	}
	op := tr.Operations[0]
	// A call that waits for a decision is answered at once; the Agent reads its outcome
	// from QueryBoard's strip of Operations (docs/mcp.md, "Held calls and the write
	// gate"), polling as a client would.
	deadline := time.Now().Add(time.Minute)
	for op.State == contract.OpWaitingForDecision || op.State == contract.OpRunning {
		if time.Now().After(deadline) {
			return fmt.Errorf("ApplyAction %+v still not done after a minute; the strip: %+v", op, tr.Operations)
		}
		time.Sleep(pollEvery)
		if tr, err = callTool(ctx, cs, contract.ToolQueryBoard, queryArgs); err != nil {
			return err
		}
		i := slices.IndexFunc(tr.Operations, func(o contract.OperationEntry) bool { return o.Label == op.Label && o.At.Equal(op.At) })
		if i < 0 {
			continue
		}
		op = tr.Operations[i]
	}
	if op.State != contract.OpDone {
		return fmt.Errorf("ApplyAction = %s %s %+v, want done", tr.ErrorCode, tr.Teaching, op)
	}
	return nil
}

// pollEvery is how long an Agent waiting for a decided call waits between QueryBoards.
const pollEvery = 2 * time.Millisecond

// queryArgs is a QueryBoard of the fact the append returns.
var queryArgs = json.RawMessage(`{"pattern":{"predicate":"appended","args":{"n":"1"}}}`)

// callTool calls tool with args and decodes its answer.
func callTool(ctx context.Context, cs *mcp.ClientSession, tool string, args json.RawMessage) (contract.ToolResult, error) {
	var tr contract.ToolResult
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return tr, fmt.Errorf("%s: %w", tool, err)
	}
	if len(res.Content) != 1 {
		return tr, fmt.Errorf("%s answered %d content blocks, want 1", tool, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return tr, fmt.Errorf("%s answered %T, want text", tool, res.Content[0])
	}
	if err := json.Unmarshal([]byte(text.Text), &tr); err != nil {
		return tr, fmt.Errorf("decode %s's answer: %w", tool, err)
	}
	return tr, nil
}

// memberTime is how many decisions the member made and how long it waited for their
// answers in all, in nanoseconds.
type memberTime struct{ decisions, waited atomic.Int64 }

// decideAll is a member at the console: it follows the project's event stream after
// seq and approves each Request as soon as it is created, over the API, one after
// another, until ctx ends; t counts its decisions and the time it waited for them.
func decideAll(ctx context.Context, base, token string, seq int64, t *memberTime) error {
	client := &http.Client{Transport: bearerTransport{token: token, next: http.DefaultTransport}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/v1/events?project=default&after=%d", base, seq), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("event stream: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e contract.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return fmt.Errorf("decode an event: %w", err)
		}
		if e.Type != event.RequestCreated {
			continue
		}
		var r contract.Request
		if err := json.Unmarshal(e.Data, &r); err != nil {
			return fmt.Errorf("decode a request: %w", err)
		}
		body, err := json.Marshal(contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove})
		if err != nil {
			return err
		}
		dreq, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/api/v1/projects/default/requests/%s/decision", base, r.ID), bytes.NewReader(body))
		if err != nil {
			return err
		}
		dreq.Header.Set("Content-Type", "application/json")
		start := time.Now()
		dresp, err := client.Do(dreq)
		if err != nil {
			return err
		}
		dresp.Body.Close()
		t.waited.Add(int64(time.Since(start)))
		t.decisions.Add(1)
		if dresp.StatusCode != http.StatusOK {
			return fmt.Errorf("decide %s: %s", r.ID, dresp.Status)
		}
	}
	return sc.Err()
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}
