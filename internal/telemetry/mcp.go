package telemetry

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// knownTools are the gateway's tools, the only values of the tool label.
var knownTools = func() map[string]bool {
	m := map[string]bool{}
	for _, spec := range contract.Tools() {
		m[spec.Name] = true
	}
	return m
}()

// MCP is the gateway's receiving middleware: each tools/call is counted and timed by
// tool, and runs inside a span "mcp tools/call" whose context the admission inherits.
// Other methods pass through untouched.
func (t *Telemetry) MCP(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		tool := call.Params.Name
		if !knownTools[tool] {
			tool = "unknown" // a client names the tool; a label may not grow without bound
		}
		// The SDK runs a call in its session's context, not its POST's: each call is a
		// trace of its own, continuing a traceparent the agent sent on the POST, and
		// linked to the session's span.
		opts := []trace.SpanStartOption{trace.WithAttributes(attribute.String("mcp.tool", tool)),
			trace.WithLinks(trace.LinkFromContext(ctx))}
		parent := trace.ContextWithSpanContext(ctx, trace.SpanContext{})
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			parent = Propagator.Extract(parent, propagation.HeaderCarrier(extra.Header))
		}
		if !trace.SpanContextFromContext(parent).IsValid() {
			opts = append(opts, trace.WithNewRoot())
		}
		start := time.Now()
		ctx, span := t.tracer.Start(parent, "mcp tools/call", opts...)
		defer span.End()
		res, err := next(ctx, method, req)
		outcome := "ok"
		switch r, _ := res.(*mcp.CallToolResult); {
		case err != nil:
			outcome = "error"
			span.SetStatus(codes.Error, "the call failed")
		case r != nil && r.IsError:
			outcome = "tool_error"
		}
		span.SetAttributes(attribute.String("mcp.outcome", outcome))
		t.toolCalls.WithLabelValues(tool, outcome).Inc()
		t.toolDur.WithLabelValues(tool).Observe(time.Since(start).Seconds())
		return res, err
	}
}
