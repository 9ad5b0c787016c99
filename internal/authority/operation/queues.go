package operation

import (
	"context"
	"fmt"
	"slices"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
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
// each queued Operation is counted once, under the first live Connection (in the store's
// order) whose tool locks name its Tool. It reads each Connection's locks once.
func (d *Dispatcher) Queues(ctx context.Context) ([]QueueDepth, error) {
	ps, err := d.store.Projects(ctx)
	if err != nil {
		return nil, fmt.Errorf("work queues: %w", err)
	}
	var out []QueueDepth
	for _, p := range ps {
		project := contract.ProjectID(p.ID)
		queued, err := d.ops.Queued(ctx, project)
		if err != nil {
			return nil, fmt.Errorf("work queues of %s: %w", project, err)
		}
		rows, err := d.store.Connections(ctx, p.ID)
		if err != nil {
			return nil, fmt.Errorf("work queues of %s: %w", project, err)
		}
		type locked struct {
			id    contract.ConnectionID
			tools []store.ToolLock
		}
		var conns []locked
		depth := map[contract.ConnectionID]int{}
		for _, c := range rows {
			if c.RevokedAt != nil {
				continue
			}
			locks, err := d.store.ToolLocks(ctx, c.ID)
			if err != nil {
				return nil, fmt.Errorf("work queues of %s: %w", project, err)
			}
			conns = append(conns, locked{contract.ConnectionID(c.ID), locks})
			depth[contract.ConnectionID(c.ID)] = 0 // a live Connection with nothing queued reads 0
		}
		for _, q := range queued {
			at := contract.ConnectionID("")
			for _, c := range conns {
				if slices.ContainsFunc(c.tools, func(l store.ToolLock) bool { return l.Tool == q.Request.Tool }) {
					at = c.id
					break
				}
			}
			depth[at]++
		}
		for _, c := range conns {
			out = append(out, QueueDepth{Project: project, Connection: c.id, Queued: depth[c.id]})
		}
		if n := depth[""]; n > 0 {
			out = append(out, QueueDepth{Project: project, Queued: n})
		}
	}
	return out, nil
}
