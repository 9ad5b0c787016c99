package telemetry_test

import (
	"context"
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
