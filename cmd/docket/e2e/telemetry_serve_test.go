package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/docketrun/docket/internal/datadir"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver: the spans real docket
// processes export to it, by trace id.
type otlpReceiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	traces map[string][]string // span names by trace id (hex)
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{traces: map[string][]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var in coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range in.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					id := hex.EncodeToString(sp.TraceId)
					r.traces[id] = append(r.traces[id], sp.Name)
				}
			}
		}
		r.mu.Unlock()
		out, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// traceWith returns the span names of a trace holding every one of names, waiting
// up to limit for the processes to export them.
func (r *otlpReceiver) traceWith(limit time.Duration, names ...string) ([]string, map[string][]string) {
	deadline := time.Now().Add(limit)
	for {
		r.mu.Lock()
		all := map[string][]string{}
		for id, spans := range r.traces {
			all[id] = slices.Clone(spans)
		}
		r.mu.Unlock()
		for _, spans := range all {
			if !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(spans, n) }) {
				return spans, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, all
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// metricSum sums the samples of metric in a Prometheus text exposition whose labels
// include every one of labels (each `name="value"`).
func metricSum(t *testing.T, exposition, metric string, labels ...string) float64 {
	t.Helper()
	var sum float64
	for line := range strings.Lines(exposition) {
		line = strings.TrimSpace(line)
		var set, value string
		if name, rest, ok := strings.Cut(line, "{"); ok && name == metric {
			if set, value, ok = strings.Cut(rest, "} "); !ok {
				continue
			}
		} else if name, rest, ok := strings.Cut(line, " "); ok && name == metric {
			value = rest
		} else {
			continue
		}
		if slices.ContainsFunc(labels, func(l string) bool { return !strings.Contains(set, l) }) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// TestServeWorker_MetricsAndTrace runs the verified calculation across real docket
// serve, docket worker and docket agent run processes, exporting traces to an
// in-process OTLP receiver. /metrics refuses an unauthenticated scrape and, scraped
// with a token, counts the tool calls and Operations the calculation ran; one trace
// spans the gateway's tool call, its admission, the dispatch, the worker's execution
// and the hop reports of one governed call; the agent's model turns are spans too.
func TestServeWorker_MetricsAndTrace(t *testing.T) {
	recv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	s := runVerifiedCalculation(t, "")
	if _, err := os.Stat(filepath.Join(s.files, "out", "result.json")); err != nil {
		t.Fatalf("the worker did not write the result: %v", err)
	}

	scrape := func(token string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b.String()
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a credential = %d, want 401", code)
	}
	// /metrics is a member's: it names every project of the serve (docs/observability.md).
	if code, _ := scrape(s.token); code != http.StatusForbidden {
		t.Errorf("GET /metrics with an Agent's token = %d, want 403", code)
	}
	member, err := os.ReadFile(filepath.Join(s.home, datadir.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	code, m := scrape(strings.TrimSpace(string(member)))
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d, want 200\n%s", code, m)
	}
	for _, c := range []struct {
		metric string
		labels []string
		min    float64
	}{
		{"docket_mcp_tool_calls_total", []string{`tool="OpenCase"`, `outcome="ok"`}, 1},
		{"docket_mcp_tool_calls_total", []string{`tool="ApplyAction"`, `outcome="ok"`}, 3},
		{"docket_mcp_tool_calls_total", []string{`tool="CloseCase"`, `outcome="ok"`}, 1},
		{"docket_mcp_tool_call_duration_seconds_count", []string{`tool="ApplyAction"`}, 3},
		{"docket_operations", []string{`state="done"`}, 3},
		{"docket_operation_transitions_total", []string{`state="done"`}, 3},
		{"docket_work_operations_total", []string{`kind="Claim"`, `outcome="accepted"`}, 2},
		{"docket_work_operations_total", []string{`kind="Report"`, `outcome="accepted"`}, 2},
		{"docket_work_served_total", nil, 2},
		{"docket_events_appended_total", []string{`type="work.reported"`}, 2},
		{"docket_http_requests_total", []string{`route="/mcp"`, `method="POST"`, `code="200"`}, 5},
		{"docket_http_requests_total", []string{`route="POST /work"`}, 4},
		{"docket_worker_lease", []string{`state="live"`}, 1},
		{"docket_board_nodes", nil, 1},
	} {
		if got := metricSum(t, m, c.metric, c.labels...); got < c.min {
			t.Errorf("%s%v = %v, want at least %v", c.metric, c.labels, got, c.min)
		}
	}
	if !strings.Contains(m, "\ndocket_projection_rebuilds_total 0\n") {
		t.Error("/metrics has no docket_projection_rebuilds_total at 0, with no COMMIT failed")
	}
	if !strings.Contains(m, "\ndocket_work_queued{connection=\"") {
		t.Error("/metrics has no docket_work_queued gauge of the worker's Connection")
	}
	if got := metricSum(t, m, "docket_work_queued"); got != 0 {
		t.Errorf("docket_work_queued = %v after every call settled, want 0", got)
	}
	if got := metricSum(t, m, "docket_event_append_duration_seconds_count"); got < 10 {
		t.Errorf("docket_event_append_duration_seconds_count = %v, want every append timed", got)
	}
	if strings.Contains(m, s.token) || strings.Contains(m, s.key) {
		t.Error("/metrics shows a token or a Connection key")
	}

	want := []string{"mcp tools/call", "operation admit", "board evaluate", "dispatch serve", "worker execute", "work Claim", "work Report"}
	spans, all := recv.traceWith(20*time.Second, want...)
	if spans == nil {
		t.Fatalf("no one trace holds the spans %q; traces received: %v", want, all)
	}
	for _, one := range []string{"mcp tools/call", "operation admit", "worker execute"} {
		if n := count(spans, one); n != 1 {
			t.Errorf("the governed call's trace holds %d spans %q, want 1 (a trace per call): %q", n, one, spans)
		}
	}
	t.Logf("one governed call's trace: %q", spans)
	if turn, all := recv.traceWith(20*time.Second, "model turn"); turn == nil {
		t.Errorf("docket agent run exported no span \"model turn\"; traces received: %v", all)
	}
}

func count(names []string, name string) int {
	n := 0
	for _, s := range names {
		if s == name {
			n++
		}
	}
	return n
}
