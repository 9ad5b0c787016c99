package telemetry

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket/internal/contract"
)

// StartWork is the worker hop's hook: it opens the span of one /work operation,
// continuing the traceparent the worker sent (its execution's, on a Claim or Report),
// and returns the context to answer in and the function that ends it. That function
// counts the answer and, for each row a Poll serves, opens and ends a "dispatch serve"
// span in the trace of the row's admission and puts that span's traceparent on the row,
// so the worker's execution continues the governed call's trace. The admission's span
// is the one this process kept, or else the traceparent the row carries from the log
// (work admitted before a restart, or by another instance).
func (t *Telemetry) StartWork(ctx context.Context, h http.Header, kind string, conn contract.Connection) (context.Context, func(*contract.WorkAnswer, error)) {
	start := time.Now()
	if !trace.SpanContextFromContext(ctx).IsValid() { // else the request's span continued it
		ctx = Propagator.Extract(ctx, propagation.HeaderCarrier(h))
	}
	ctx, span := t.tracer.Start(ctx, "work "+kindOf(kind), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("docket.connection", string(conn.ID))))
	return ctx, func(ans *contract.WorkAnswer, err error) {
		defer span.End()
		outcome := "accepted"
		switch {
		case err != nil:
			outcome = "error"
			if code := contract.CodeOf(err); code != "" {
				outcome = string(code)
			}
			span.SetStatus(codes.Error, outcome)
		case ans != nil && ans.Code != "":
			outcome = string(ans.Code)
		}
		k := kindOf(kind)
		t.hop.WithLabelValues(k, string(conn.ID), outcome).Inc()
		t.hopDur.WithLabelValues(k).Observe(time.Since(start).Seconds())
		if ans == nil || len(ans.Work) == 0 {
			return
		}
		t.workServed.WithLabelValues(string(conn.ID)).Add(float64(len(ans.Work)))
		for i := range ans.Work {
			row := &ans.Work[i]
			parent, ok := t.carriedFor(string(row.Project) + "/" + row.ID)
			if !ok {
				// Not admitted by this process since it started (a restart, another
				// instance): the row carries the admission's traceparent from the log.
				parent = trace.SpanContextFromContext(WithTraceParent(context.Background(), row.TraceParent))
				if !parent.IsValid() {
					continue
				}
			}
			_, serve := t.tracer.Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "dispatch serve",
				trace.WithAttributes(attribute.String("docket.work", row.ID), attribute.String("docket.connection", string(conn.ID))),
				trace.WithLinks(trace.LinkFromContext(ctx)))
			row.TraceParent = TraceParent(trace.ContextWithSpan(context.Background(), serve))
			serve.End()
		}
	}
}

// carriedFor returns the admission's span context kept for a row; a row served again
// (its claim was lost) is traced again from the same admission.
func (t *Telemetry) carriedFor(key string) (trace.SpanContext, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sc, ok := t.carried[key]
	return sc, ok
}

// kindOf keeps the kind label to the hop's five operations.
func kindOf(k string) string {
	switch k {
	case contract.WorkPoll, contract.WorkRenewLease, contract.WorkReleaseLease, contract.WorkClaim, contract.WorkReport:
		return k
	}
	return "unknown"
}
