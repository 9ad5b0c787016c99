package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/docketrun/docket/internal/store"
)

// Config holds what a [Telemetry] needs; every field is optional.
type Config struct {
	// Tracer is the provider spans start from; default a no-op provider.
	Tracer trace.TracerProvider
	// State is read at each scrape for the gauges of Board sizes and lease states; without
	// it they are left out.
	State store.Reader
	// Now is the clock a lease's expiry is judged by; default time.Now.
	Now func() time.Time
}

// Telemetry is serve's metrics registry, its tracer and the trace contexts carried from
// an admission to the worker that runs it. It is safe for concurrent use.
type Telemetry struct {
	reg    *prometheus.Registry
	tracer trace.Tracer

	httpReqs   *prometheus.CounterVec
	httpDur    *prometheus.HistogramVec
	toolCalls  *prometheus.CounterVec
	toolDur    *prometheus.HistogramVec
	ops        *prometheus.GaugeVec
	opChanges  *prometheus.CounterVec
	events     *prometheus.CounterVec
	appendDur  prometheus.Histogram
	hop        *prometheus.CounterVec
	hopDur     *prometheus.HistogramVec
	workServed *prometheus.CounterVec

	mu      sync.Mutex
	opState map[string]string // unsettled Operations' "state/stage", by project and work id
	carried map[string]trace.SpanContext
}

// maxCarried bounds the trace contexts kept for admitted, not yet served work; past it
// the oldest are forgotten (their work runs untraced, never unrun).
const maxCarried = 10000

// New returns a Telemetry with its own registry.
func New(cfg Config) *Telemetry {
	tp := cfg.Tracer
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	t := &Telemetry{
		reg:    prometheus.NewRegistry(),
		tracer: tp.Tracer("github.com/docketrun/docket"),
		httpReqs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docket_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code."}, []string{"route", "method", "code"}),
		httpDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "docket_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by route pattern (held MCP calls and event streams included).", Buckets: prometheus.DefBuckets}, []string{"route"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docket_mcp_tool_calls_total",
			Help: "MCP tool calls answered, by tool and outcome (ok, tool_error, error)."}, []string{"tool", "outcome"}),
		toolDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "docket_mcp_tool_call_duration_seconds",
			Help: "Time to answer an MCP tool call, by tool.", Buckets: prometheus.DefBuckets}, []string{"tool"}),
		ops: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "docket_operations",
			Help: "Operations by state and stage, as this serve saw them change since it started; settled ones stay counted."}, []string{"state", "stage"}),
		opChanges: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docket_operation_transitions_total",
			Help: "Operations entering a state, by state."}, []string{"state"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docket_events_appended_total",
			Help: "Events appended to the log, by type (counted at append, before the commit)."}, []string{"type"}),
		appendDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "docket_event_append_duration_seconds",
			Help: "Time of one append call (one event, or several of one log at once) in its transaction.", Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16)}),
		hop: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docket_work_operations_total",
			Help: "Worker hop operations at POST /work, by kind, Connection and outcome (accepted or the refusal's code)."}, []string{"kind", "connection", "outcome"}),
		hopDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "docket_work_operation_duration_seconds",
			Help: "Time to answer a worker hop operation, by kind (a Poll's long wait included).", Buckets: prometheus.DefBuckets}, []string{"kind"}),
		workServed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docket_work_served_total",
			Help: "Work rows served to workers, by Connection."}, []string{"connection"}),
		opState: map[string]string{},
		carried: map[string]trace.SpanContext{},
	}
	t.reg.MustRegister(t.httpReqs, t.httpDur, t.toolCalls, t.toolDur, t.ops, t.opChanges, t.events, t.appendDur,
		t.hop, t.hopDur, t.workServed,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cfg.State != nil {
		now := cfg.Now
		if now == nil {
			now = time.Now
		}
		t.reg.MustRegister(&stateCollector{st: cfg.State, now: now})
	}
	return t
}

// CountRebuilds exports n, the projections rebuilt from the log because their cursors
// found them off it (the authority's ProjectionRebuilds; the WARN each logs says how), as
// docket_projection_rebuilds_total. Call it once.
func (t *Telemetry) CountRebuilds(n func() int64) {
	t.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "docket_projection_rebuilds_total",
		Help: "Projections rebuilt from the log because their cursors found them off it: events a failed COMMIT lost, or a State made at a seq the log does not link to (the WARN of each says which).",
	}, func() float64 { return float64(n()) }))
}

// Registry returns the registry the metrics are kept in.
func (t *Telemetry) Registry() *prometheus.Registry { return t.reg }

// Tracer returns the tracer the hooks start spans with.
func (t *Telemetry) Tracer() trace.Tracer { return t.tracer }

// Handler serves the metrics in the Prometheus text format. It does not authenticate:
// the route that mounts it does.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{Registry: t.reg})
}

// scrapeTimeout bounds the store reads of one scrape.
const scrapeTimeout = 5 * time.Second

var (
	boardNodesDesc = prometheus.NewDesc("docket_board_nodes", "Board nodes kept, by project.", []string{"project"}, nil)
	leaseDesc      = prometheus.NewDesc("docket_worker_lease", "Each live Connection's leases, one per worker process: how many are in each state (live, expired), or 1 for none.",
		[]string{"project", "connection", "state"}, nil)
)

// stateCollector reads Board sizes and lease states from the store at each scrape.
type stateCollector struct {
	st  store.Reader
	now func() time.Time
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- boardNodesDesc
	ch <- leaseDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	projects, err := c.st.Projects(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(boardNodesDesc, err)
		return
	}
	now := c.now()
	for _, p := range projects {
		// Counted, not read: a scrape every few seconds must not read a 100,000-node Board.
		nodes, err := c.st.NodeCount(ctx, p.ID)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(boardNodesDesc, err)
			return
		}
		ch <- prometheus.MustNewConstMetric(boardNodesDesc, prometheus.GaugeValue, float64(nodes), p.ID)
		conns, err := c.st.Connections(ctx, p.ID)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(leaseDesc, err)
			return
		}
		for _, conn := range conns {
			if conn.RevokedAt != nil {
				continue
			}
			// One lease per worker process: the gauge counts a Connection's leases in
			// each state, and says none when no worker ever polled.
			ls, err := c.st.Leases(ctx, conn.ID)
			if err != nil {
				ch <- prometheus.NewInvalidMetric(leaseDesc, err)
				return
			}
			counts := map[string]int{}
			for _, l := range ls {
				switch {
				case l.Generation == 0:
				case now.Before(l.ExpiresAt):
					counts["live"]++
				default:
					counts["expired"]++
				}
			}
			if len(counts) == 0 {
				counts["none"] = 1
			}
			for _, state := range []string{"live", "expired", "none"} {
				if n, ok := counts[state]; ok {
					ch <- prometheus.MustNewConstMetric(leaseDesc, prometheus.GaugeValue, float64(n), p.ID, conn.ID, state)
				}
			}
		}
	}
}

// methodOf keeps the method label to the standard methods: a client chooses the method
// string, and a label may not grow without bound.
func methodOf(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

func codeOf(status int) string { return strconv.Itoa(status) }
