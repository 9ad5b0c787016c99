package authority

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// MaxEventScan bounds how many events one filtered read looks at, so that a filter that
// matches little cannot make one request read a whole long log.
const MaxEventScan = 10000

// FilterEvents returns up to limit events of project after sequence number after that f
// selects, and the sequence number of the last event it looked at: the cursor to read on
// from when fewer than limit came back and the log goes on. agent, when not empty, names
// the Agent f selects by id or by name; it replaces f.Agent.
func (a *Authority) FilterEvents(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64, limit int, f contract.EventFilter, agent string) ([]contract.Event, int64, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, 0, err
	}
	if after < 0 {
		return nil, 0, contract.Errorf(contract.CodeInvalidArgument, "the cursor %d is negative; start from 0.", after)
	}
	if agent != "" {
		ag, err := identity.FindAgent(ctx, a.store, project, agent)
		if err != nil {
			return nil, 0, fmt.Errorf("filter events: %w", eventlog.Refuse(err, "agent "+agent))
		}
		f.Agent = contract.AgentID(ag.ID)
	}
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxEventPage)
	out := []contract.Event{}
	last, scanned := after, 0
	err := eventlog.Scan(ctx, a.store, project, after, -1, func(e store.Event) error {
		if scanned == MaxEventScan || len(out) == limit {
			return errFound
		}
		scanned++
		last = e.Seq
		if w := eventWire(e); f.Match(w) {
			out = append(out, w)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, 0, fmt.Errorf("read events of %s: %w", project, eventlog.Refuse(err, "project "+string(project)))
	}
	return out, last, nil
}
