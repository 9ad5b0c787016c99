package operation

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// traceParent is the W3C traceparent (version 00) of ctx's span, or "" when ctx has
// none: what an event keeps so that work served later joins the call's trace.
func traceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// startSpan starts the span of one step of a call (its admission, its Board
// evaluation) under ctx's span, with that span's own provider: a call is traced here only
// when its edge traces it, and nothing is configured in this package.
func startSpan(ctx context.Context, name, tool string) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer("github.com/docketrun/docket/internal/authority/operation").
		Start(ctx, name, trace.WithAttributes(attribute.String("mcp.tool", tool)))
}
