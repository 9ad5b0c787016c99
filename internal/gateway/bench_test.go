package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/telemetry"
)

// loop runs fn in b.Loop and reports the median duration as p50-ns.
func loop(b *testing.B, fn func(i int)) {
	b.Helper()
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		fn(i)
		took = append(took, time.Since(start))
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
}

// countedLoop is loop on f, reporting what each call cost f's store: its calls, its
// reads of a log's head and its transactions.
func countedLoop(b *testing.B, f *fixture, fn func(i int)) {
	b.Helper()
	f.count.Reset()
	loop(b, fn)
	c, n := f.count.Counts(), float64(b.N)
	b.ReportMetric(float64(c.Calls)/n, "store-calls/op")
	b.ReportMetric(float64(c.HeadReads)/n, "head-reads/op")
	b.ReportMetric(float64(c.Txs)/n, "tx/op")
	var from []string
	for k, v := range c.HeadsFrom {
		from = append(from, fmt.Sprintf("%s %.2f", k, float64(v)/n))
	}
	slices.Sort(from)
	b.Logf("head reads per call:\n\t%s", strings.Join(from, "\n\t"))
}

// BenchmarkQueryBoard measures a QueryBoard round trip through the official SDK client
// on loopback, on a Board of 1,000 facts.
func BenchmarkQueryBoard(b *testing.B) { benchQueryBoard(b, newFixture(b, time.Second)) }

// BenchmarkObserved_QueryBoard is BenchmarkQueryBoard with serve's metrics wired and
// tracing off; BenchmarkTraced_QueryBoard records every span in memory.
func BenchmarkObserved_QueryBoard(b *testing.B) {
	benchQueryBoard(b, newObservedFixture(b, time.Second, telemetry.New(telemetry.Config{})))
}

func BenchmarkTraced_QueryBoard(b *testing.B) {
	benchQueryBoard(b, newObservedFixture(b, time.Second, tracedTelemetry()))
}

// tracedTelemetry is telemetry whose spans all go to an in-memory exporter.
func tracedTelemetry() *telemetry.Telemetry {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	return telemetry.New(telemetry.Config{Tracer: tp})
}

// BenchmarkQueryBoard_InConversation is BenchmarkQueryBoard as a runtime sends it: in a
// conversation named in _meta, whose pin the gateway reads before each call.
func BenchmarkQueryBoard_InConversation(b *testing.B) {
	benchQueryBoardIn(b, newFixture(b, time.Second), "c-1")
}

// BenchmarkQueryBoard_ViewSent is BenchmarkQueryBoard with every answer carrying the View
// in full, as when the Board changed since the conversation's last answer: the client
// says it holds no View (_meta "docket/view" "").
func BenchmarkQueryBoard_ViewSent(b *testing.B) {
	benchQueryBoardMeta(b, newFixture(b, time.Second), mcp.Meta{contract.MetaViewKey: ""})
}

// BenchmarkQueryBoard_Runtime is BenchmarkQueryBoard as the Docket runtime's client
// sends it: naming the View and the strip of Operations it holds (_meta "docket/view",
// "docket/operations"), saying it applies View deltas, so the steady answer names both
// unchanged, and that it reads the text block alone ("docket/textOnly"). It calls in the
// session's own conversation, as BenchmarkQueryBoard does.
func BenchmarkQueryBoard_Runtime(b *testing.B) {
	f := newFixture(b, time.Second)
	cs := f.connect(b, nil)
	fillItems(b, cs)
	raw, err := json.Marshal(itemQuery)
	if err != nil {
		b.Fatal(err)
	}
	view, strip := "", ""
	countedLoop(b, f, func(int) {
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "QueryBoard", Arguments: json.RawMessage(raw),
			Meta: mcp.Meta{contract.MetaViewKey: view, contract.MetaOperationsKey: strip, contract.MetaViewDeltaKey: true, contract.MetaTextOnlyKey: true}})
		if err != nil || res.IsError {
			b.Fatalf("QueryBoard failed: %v", err)
		}
		m, _ := res.Meta[contract.MetaKey].(map[string]any)
		view, _ = m["viewDigest"].(string)
		strip, _ = m["operationsDigest"].(string)
	})
}

func benchQueryBoard(b *testing.B, f *fixture) { benchQueryBoardIn(b, f, "") }

func benchQueryBoardIn(b *testing.B, f *fixture, conversation string) {
	var meta mcp.Meta
	if conversation != "" {
		meta = mcp.Meta{contract.MetaConversationKey: conversation}
	}
	benchQueryBoardMeta(b, f, meta)
}

func benchQueryBoardMeta(b *testing.B, f *fixture, meta mcp.Meta) {
	cs := f.connect(b, nil)
	fillItems(b, cs)
	raw, err := json.Marshal(itemQuery)
	if err != nil {
		b.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "QueryBoard", Arguments: json.RawMessage(raw), Meta: meta}
	countedLoop(b, f, func(int) {
		res, err := cs.CallTool(b.Context(), p)
		if err != nil || res.IsError {
			b.Fatalf("QueryBoard failed: %v", err)
		}
	})
}

// itemQuery is the QueryBoard of the QueryBoard benchmarks: one of fillItems' facts.
var itemQuery = contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str("500")}}}

// fillItems asserts the 1,000 item facts of the QueryBoard benchmarks.
func fillItems(b *testing.B, cs *mcp.ClientSession) {
	for batch := range 4 {
		var in contract.Batch
		for i := range 250 {
			in.Operations = append(in.Operations, contract.Operation{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str(fmt.Sprint(batch*250 + i))}}})
		}
		if res, _ := call(b, cs, "ApplyBatch", in); !res.Accepted {
			b.Fatalf("ApplyBatch: %s %s", res.ErrorCode, res.Teaching)
		}
	}
}

// BenchmarkApplyBatch measures an ApplyBatch of 10 facts through the SDK client, held
// until its outcome, on SQLite.
func BenchmarkApplyBatch(b *testing.B) { benchApplyBatch(b, newBenchFixture(b, time.Second, nil)) }

func BenchmarkObserved_ApplyBatch(b *testing.B) {
	benchApplyBatch(b, newBenchFixture(b, time.Second, telemetry.New(telemetry.Config{})))
}

func BenchmarkTraced_ApplyBatch(b *testing.B) {
	benchApplyBatch(b, newBenchFixture(b, time.Second, tracedTelemetry()))
}

func benchApplyBatch(b *testing.B, f *fixture) {
	cs := f.connect(b, nil)
	countedLoop(b, f, func(i int) {
		var in contract.Batch
		for j := range 10 {
			in.Operations = append(in.Operations, contract.Operation{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str(fmt.Sprint(i*10 + j))}}})
		}
		res, err := callErr(cs, "ApplyBatch", in)
		if err != nil || res.IsError {
			b.Fatalf("ApplyBatch failed: %v", err)
		}
	})
}

// BenchmarkApplyBatch_Delta is BenchmarkApplyBatch from a client that names the View it
// holds and says it applies View deltas, as the Docket runtime does, so each answer
// carries what the batch changed in the View rather than the View whole. It calls in the
// session's own conversation, as BenchmarkApplyBatch does: a named one adds the read of
// its pin to both.
func BenchmarkApplyBatch_Delta(b *testing.B) { benchApplyBatchDelta(b, nil) }

// BenchmarkApplyBatch_Runtime is BenchmarkApplyBatch_Delta as the Docket runtime sends
// it: saying too that it reads the text block alone (_meta "docket/textOnly"), so each
// answer carries the ToolResult once, without structuredContent.
func BenchmarkApplyBatch_Runtime(b *testing.B) {
	benchApplyBatchDelta(b, mcp.Meta{contract.MetaTextOnlyKey: true})
}

// benchApplyBatchDelta is BenchmarkApplyBatch_Delta with extra added to each call's _meta.
func benchApplyBatchDelta(b *testing.B, extra mcp.Meta) {
	f := newBenchFixture(b, time.Second, nil)
	cs := f.connect(b, nil)
	held := ""
	countedLoop(b, f, func(i int) {
		var in contract.Batch
		for j := range 10 {
			in.Operations = append(in.Operations, contract.Operation{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str(fmt.Sprint(i*10 + j))}}})
		}
		raw, err := json.Marshal(in)
		if err != nil {
			b.Fatal(err)
		}
		meta := mcp.Meta{contract.MetaViewKey: held, contract.MetaViewDeltaKey: true}
		maps.Copy(meta, extra)
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "ApplyBatch", Arguments: json.RawMessage(raw), Meta: meta})
		if err != nil || res.IsError {
			b.Fatalf("ApplyBatch failed: %v", err)
		}
		m, _ := res.Meta[contract.MetaKey].(map[string]any)
		if held, _ = m["viewDigest"].(string); held == "" {
			b.Fatal("the answer names no viewDigest")
		}
	})
}

// BenchmarkSDKFloor is the team's MCP floor in this process: one tools/call round trip
// over the official SDK on loopback, a bare SDK server with one tool answering a small
// JSON object. BenchmarkQueryBoard's ratio to it, measured in the same run, is what the
// gateway adds to the SDK.
func BenchmarkSDKFloor(b *testing.B) {
	benchBareSDK(b, func() *mcp.CallToolResult {
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"ok":true,"greeting":"hello docket","seq":1}`),
			Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true,"greeting":"hello docket","seq":1}`}}}
	}())
}

// BenchmarkSDKFloor_QueryBoardAnswer is BenchmarkSDKFloor answering, from memory, the
// bytes BenchmarkQueryBoard's QueryBoard answers (its text block, structuredContent and
// _meta, the View named unchanged): what the SDK alone costs to carry that answer, with
// no authority behind it. BenchmarkSDKFloor_QueryBoardAnswerWithView carries the same
// answer with the View in full, as BenchmarkQueryBoard_ViewSent answers it.
func BenchmarkSDKFloor_QueryBoardAnswer(b *testing.B) { benchSDKQueryBoardAnswer(b, nil) }

func BenchmarkSDKFloor_QueryBoardAnswerWithView(b *testing.B) {
	benchSDKQueryBoardAnswer(b, mcp.Meta{contract.MetaViewKey: ""})
}

func benchSDKQueryBoardAnswer(b *testing.B, meta mcp.Meta) {
	f := newFixture(b, time.Second)
	cs := f.connect(b, nil)
	fillItems(b, cs)
	raw, err := json.Marshal(itemQuery)
	if err != nil {
		b.Fatal(err)
	}
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "QueryBoard", Arguments: json.RawMessage(raw), Meta: meta})
	if err != nil || res.IsError {
		b.Fatalf("QueryBoard failed: %v", err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	benchBareSDK(b, &mcp.CallToolResult{Meta: res.Meta, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(text)})
}

// benchBareSDK measures round trips to a bare SDK server whose one tool answers ans.
func benchBareSDK(b *testing.B, ans *mcp.CallToolResult) {
	server := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return ans, nil })
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	b.Cleanup(srv.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "floor-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: contract.ProtocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"name":"docket"}`)}
	loop(b, func(int) {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	})
}
