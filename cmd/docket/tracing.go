package main

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket/internal/telemetry"
)

// tracingFlush bounds the export of the last spans when a process stops.
const tracingFlush = 5 * time.Second

// startTracing returns the process's tracer provider (OTLP when
// OTEL_EXPORTER_OTLP_ENDPOINT is set, a no-op otherwise) and the function that flushes
// it at exit; a failed flush is logged.
func startTracing(ctx context.Context, e *env, log *slog.Logger, service string) (trace.TracerProvider, func(), error) {
	tp, shutdown, err := telemetry.TracerProvider(ctx, e.Getenv, service)
	if err != nil {
		return nil, nil, err
	}
	return tp, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlush)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("traces not flushed", logErr, err)
		}
	}, nil
}
