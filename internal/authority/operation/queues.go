package operation

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/contract"
)

// QueueDepth is how many of a project's queued Operations (running, not dispatched) wait
// for one Connection: those whose Tool is locked on it. Connection "" counts the queued
// work whose Tool is locked on no live Connection of the project.
type QueueDepth struct {
	Project    contract.ProjectID
	Connection contract.ConnectionID
	Queued     int
}

// Queues returns the depth of every project's work queue by Connection, for the metrics:
// each queued Operation is counted once, under the first live Connection (by id, the
// order the store lists them in) whose tool locks name its Tool. The Connections and
// their locks are the operation ledger's, read with the queue (setup.go).
func (d *Dispatcher) Queues(ctx context.Context) ([]QueueDepth, error) {
	ps, err := d.store.Projects(ctx)
	if err != nil {
		return nil, fmt.Errorf("work queues: %w", err)
	}
	var out []QueueDepth
	for _, p := range ps {
		project := contract.ProjectID(p.ID)
		queued, conns, err := d.ops.queuedWithConns(ctx, project)
		if err != nil {
			return nil, fmt.Errorf("work queues of %s: %w", project, err)
		}
		depth := map[contract.ConnectionID]int{}
		for _, c := range conns {
			depth[c.conn.ID] = 0 // a live Connection with nothing queued reads 0
		}
		for _, q := range queued {
			at := contract.ConnectionID("")
			for _, c := range conns {
				if _, ok := c.rec.lock(q.Request.Tool); ok {
					at = c.conn.ID
					break
				}
			}
			depth[at]++
		}
		for _, c := range conns {
			out = append(out, QueueDepth{Project: project, Connection: c.conn.ID, Queued: depth[c.conn.ID]})
		}
		if n := depth[""]; n > 0 {
			out = append(out, QueueDepth{Project: project, Queued: n})
		}
	}
	return out, nil
}
