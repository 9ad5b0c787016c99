package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// EndpointEnv turns tracing on: the OTLP/HTTP collector traces are exported to.
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and the exporter's other standard variables are
// read by the exporter itself.
const EndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"

// Propagator is the one way a trace context crosses a hop: W3C traceparent.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// TracerProvider returns the provider a process traces with and the function that
// flushes and stops it. Without OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only
// variant) in getenv, tracing is off: a no-op provider whose spans cost a call each.
func TracerProvider(ctx context.Context, getenv func(string) string, service string) (trace.TracerProvider, func(context.Context) error, error) {
	if getenv(EndpointEnv) == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", service))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// TraceParent returns the W3C traceparent of ctx's span, or "" when it has none.
func TraceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	Propagator.Inject(ctx, c)
	return c["traceparent"]
}

// WithTraceParent returns ctx carrying the remote span context tp names; a malformed
// or empty tp leaves ctx as it is.
func WithTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return Propagator.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}
