package telemetry

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HTTP wraps the listener's handler: it counts and times each request by the pattern
// the ServeMux inside matched (set on the request as it routes), and opens a server span
// that continues a traceparent the caller sent.
func (t *Telemetry) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := t.tracer.Start(ctx, "http "+methodOf(r.Method), trace.WithSpanKind(trace.SpanKindServer))
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		r = r.WithContext(ctx)
		next.ServeHTTP(rw, r)
		// The ServeMux sets the matched pattern on the request it routes: r here.
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		t.httpReqs.WithLabelValues(route, methodOf(r.Method), codeOf(rw.status)).Inc()
		t.httpDur.WithLabelValues(route).Observe(time.Since(start).Seconds())
		span.SetName("http " + route)
		span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", rw.status))
		if rw.status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(rw.status))
		}
		span.End()
	})
}

// statusWriter remembers the status sent. Unwrap lets http.ResponseController reach
// the connection beneath (deadlines, flushes of event streams); Flush serves those that
// assert http.Flusher.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	w.wrote = true
	if err := http.NewResponseController(w.ResponseWriter).Flush(); err != nil {
		return // the writer cannot flush, or the client went away: nothing to tell
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
