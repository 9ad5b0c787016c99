// Package telemetry provides docket serve's Prometheus metrics and OpenTelemetry
// tracing: one registry owned by serve (never the global default), the hooks the HTTP
// edges call at their boundaries (routes, MCP tools, the worker hop), a timing wrapper
// of the store's event appends, and the tracer provider, which exports over OTLP/HTTP
// when OTEL_EXPORTER_OTLP_ENDPOINT is set and is a no-op otherwise.
//
// Labels and span attributes carry routes, tool names, states, event types and
// Connection and project ids; never a token, a key, call arguments or a vault value.
package telemetry
