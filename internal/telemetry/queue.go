package telemetry

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// QueuedWork is how much queued work waits for one Connection of a project; Connection ""
// is work no live Connection can take.
type QueuedWork struct {
	Project, Connection string
	Queued              int
}

var queuedDesc = prometheus.NewDesc("docket_work_queued",
	"Operations queued for a worker, by project and the Connection whose Tool lock they wait for (\"\" for none), read at each scrape.",
	[]string{"project", "connection"}, nil)

// ObserveQueues reports, at each scrape, the depths queues returns as docket_work_queued.
// A failed read is reported as the metric's error, so the scrape says so.
func (t *Telemetry) ObserveQueues(queues func(context.Context) ([]QueuedWork, error)) {
	t.reg.MustRegister(queueCollector(queues))
}

type queueCollector func(context.Context) ([]QueuedWork, error)

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queuedDesc }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	qs, err := c(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queuedDesc, err)
		return
	}
	for _, q := range qs {
		ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(q.Queued), q.Project, q.Connection)
	}
}
