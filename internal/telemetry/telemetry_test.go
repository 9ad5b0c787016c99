package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/telemetry"
)

// TestHTTP_RouteLabel counts a request under the pattern its ServeMux matched, never its
// path, keeps the writer flushable for event streams, and spans it.
func TestHTTP_RouteLabel(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel := telemetry.New(telemetry.Config{Tracer: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/projects/{project}/cases", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the wrapped writer is not an http.Flusher")
		}
		w.WriteHeader(http.StatusTeapot)
	})
	srv := httptest.NewServer(tel.HTTP(mux))
	defer srv.Close()
	for _, path := range []string{"/api/v1/projects/p1/cases", "/api/v1/projects/p2/cases", "/nowhere"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := `
# HELP docket_http_requests_total HTTP requests answered, by route pattern, method and status code.
# TYPE docket_http_requests_total counter
docket_http_requests_total{code="404",method="GET",route="unmatched"} 1
docket_http_requests_total{code="418",method="GET",route="GET /api/v1/projects/{project}/cases"} 2
`
	gathered(t, tel, want, "docket_http_requests_total")
	if spans := exp.GetSpans(); len(spans) != 3 || spans[0].Name != "http GET /api/v1/projects/{project}/cases" {
		t.Errorf("spans = %v, want three, the first named by its route", spans.Snapshots())
	}
}

// TestMCP_ToolLabel counts tool calls by tool and outcome, and a tool name the gateway
// does not have under "unknown": a client chooses the name.
func TestMCP_ToolLabel(t *testing.T) {
	tel := telemetry.New(telemetry.Config{})
	h := tel.MCP(func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return &mcp.CallToolResult{IsError: req.(*mcp.CallToolRequest).Params.Name != contract.ToolQueryBoard}, nil
	})
	for _, name := range []string{contract.ToolQueryBoard, contract.ToolApplyBatch, "no-such-tool-" + strings.Repeat("x", 40)} {
		if _, err := h(t.Context(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP docket_mcp_tool_calls_total MCP tool calls answered, by tool and outcome (ok, tool_error, error).
# TYPE docket_mcp_tool_calls_total counter
docket_mcp_tool_calls_total{outcome="ok",tool="QueryBoard"} 1
docket_mcp_tool_calls_total{outcome="tool_error",tool="ApplyBatch"} 1
docket_mcp_tool_calls_total{outcome="tool_error",tool="unknown"} 1
`
	gathered(t, tel, want, "docket_mcp_tool_calls_total")
}

// TestTraceParent round-trips a span's context through its W3C traceparent.
func TestTraceParent(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(t.Context(), "s")
	defer span.End()
	tpv := telemetry.TraceParent(ctx)
	if !strings.HasPrefix(tpv, "00-"+span.SpanContext().TraceID().String()+"-") {
		t.Fatalf("TraceParent = %q, want the span's trace id", tpv)
	}
	if got := telemetry.TraceParent(telemetry.WithTraceParent(context.Background(), tpv)); got != tpv {
		t.Errorf("WithTraceParent(%q) carries %q", tpv, got)
	}
	if got := telemetry.TraceParent(telemetry.WithTraceParent(context.Background(), "garbage")); got != "" {
		t.Errorf("a malformed traceparent gave %q, want none", got)
	}
}

// gathered compares metric in tel's registry with the exposition want.
func gathered(t *testing.T, tel *telemetry.Telemetry, want, metric string) {
	t.Helper()
	if err := testutil.GatherAndCompare(tel.Registry(), strings.NewReader(want), metric); err != nil {
		t.Error(err)
	}
}

// TestObserveQueues reports each Connection's queued work at scrape, and a failed read
// as a failed scrape rather than a zero.
func TestObserveQueues(t *testing.T) {
	tel := telemetry.New(telemetry.Config{})
	var fail error
	tel.ObserveQueues(func(context.Context) ([]telemetry.QueuedWork, error) {
		return []telemetry.QueuedWork{{Project: "default", Connection: "conn_a", Queued: 3}, {Project: "default", Queued: 1}}, fail
	})
	gathered(t, tel, `
# HELP docket_work_queued Operations queued for a worker, by project and the Connection whose Tool lock they wait for ("" for none), read at each scrape.
# TYPE docket_work_queued gauge
docket_work_queued{connection="",project="default"} 1
docket_work_queued{connection="conn_a",project="default"} 3
`, "docket_work_queued")
	fail = errors.New("store closed")
	if _, err := tel.Registry().Gather(); err == nil || !strings.Contains(err.Error(), "store closed") {
		t.Errorf("a scrape whose queue read failed gathered with %v, want the failure", err)
	}
}

// TestStartWork_TraceParentFromRow: a served row of work this process did not see
// admitted (a restart) is traced from the traceparent it carries from the log: the
// dispatch span and the row's new traceparent are in the admission's trace.
func TestStartWork_TraceParentFromRow(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel := telemetry.New(telemetry.Config{Tracer: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))})
	const admitted = "00-0102030405060708090a0b0c0d0e0f10-1112131415161718-01"
	for _, tt := range []struct{ name, carried, want string }{
		{"from the log", admitted, "0102030405060708090a0b0c0d0e0f10"},
		{"untraced", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, end := tel.StartWork(t.Context(), http.Header{}, contract.WorkPoll, contract.Connection{ID: "conn_a", Project: "default"})
			ans := &contract.WorkAnswer{Work: []contract.WorkRow{{ID: "agt_1.1", Project: "default", TraceParent: tt.carried}}}
			end(ans, nil)
			got := ans.Work[0].TraceParent
			switch {
			case tt.want == "" && got != "":
				t.Errorf("untraced row got traceparent %q", got)
			case tt.want != "" && (!strings.HasPrefix(got, "00-"+tt.want+"-") || got == admitted):
				t.Errorf("row traceparent = %q, want a dispatch span in trace %s", got, tt.want)
			}
		})
	}
	var serve int
	for _, s := range exp.GetSpans() {
		if s.Name == "dispatch serve" {
			serve++
			if s.SpanContext.TraceID().String() != "0102030405060708090a0b0c0d0e0f10" || s.Parent.SpanID().String() != "1112131415161718" {
				t.Errorf("dispatch serve span in trace %s under %s, want the admission's", s.SpanContext.TraceID(), s.Parent.SpanID())
			}
		}
	}
	if serve != 1 {
		t.Errorf("%d dispatch serve spans, want 1 (the traced row's)", serve)
	}
}
