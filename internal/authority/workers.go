package authority

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Workers returns each live Connection of project with its lease as the store's lease
// row holds it (held, expired or never), its Tool locks and its Sources, and the state
// of the worker docket start runs for it, when one reported.
func (a *Authority) Workers(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.WorkerStatus, error) {
	conns, err := a.dir.Connections(ctx, c, project)
	if err != nil {
		return nil, err
	}
	supervised, err := a.profiles.Workers(ctx, project)
	if err != nil {
		return nil, err
	}
	now := a.nowUTC()
	out := []contract.WorkerStatus{}
	for _, cn := range conns {
		if cn.RevokedAt != nil {
			continue
		}
		ws := contract.WorkerStatus{Connection: cn, Lease: contract.LeaseNever}
		ls, err := a.store.Leases(ctx, string(cn.ID))
		if err != nil {
			return nil, fmt.Errorf("read the leases of %s: %w", cn.ID, eventlog.Refuse(err, "connection "+cn.Name))
		}
		leaseStates(&ws, ls, now)
		if st, ok := supervised[cn.ID]; ok {
			ws.Supervised = &st
		}
		if ws.Tools, err = a.dir.ToolLocks(ctx, c, project, string(cn.ID)); err != nil {
			return nil, err
		}
		if ws.Sources, err = a.dir.Sources(ctx, c, project, string(cn.ID)); err != nil {
			return nil, err
		}
		out = append(out, ws)
	}
	return out, nil
}

// leaseStates fills the lease fields of ws from the Connection's lease rows: one per
// slot, each held until it expires. A row of generation 0 was never granted.
func leaseStates(ws *contract.WorkerStatus, rows []store.Lease, now time.Time) {
	last := -1
	for _, l := range rows {
		if l.Generation == 0 {
			continue
		}
		wl := contract.WorkerLease{Slot: l.Slot, State: contract.LeaseExpired, WorkerID: l.WorkerID, Generation: l.Generation}
		// A released lease expires at the epoch (see the dispatcher's release): its
		// expiry is no time a person should read, so it is left out.
		if l.ExpiresAt.After(time.Unix(0, 0)) {
			at := l.ExpiresAt
			wl.ExpiresAt = &at
		}
		if now.Before(l.ExpiresAt) {
			wl.State = contract.LeaseHeld
			ws.Lease = contract.LeaseHeld
		} else if ws.Lease == contract.LeaseNever {
			ws.Lease = contract.LeaseExpired
		}
		ws.Leases = append(ws.Leases, wl)
		if last < 0 || wl.Generation > ws.Leases[last].Generation {
			last = len(ws.Leases) - 1
		}
	}
	if last >= 0 {
		l := ws.Leases[last]
		ws.WorkerID, ws.Generation, ws.ExpiresAt = l.WorkerID, l.Generation, l.ExpiresAt
	}
}

// ReportWorkerRuntime records the state of the worker docket start runs for the live
// Connection connection (its name or id); see [profile.Keeper.ReportWorker].
func (a *Authority) ReportWorkerRuntime(ctx context.Context, c identity.Caller, project contract.ProjectID, connection string, st contract.RuntimeStatus) (contract.RuntimeStatus, error) {
	// Only a member in person reports, before anything is looked up for the caller.
	if err := c.RequireInPerson(project); err != nil {
		return contract.RuntimeStatus{}, err
	}
	conns, err := a.dir.Connections(ctx, c, project)
	if err != nil {
		return contract.RuntimeStatus{}, err
	}
	for _, cn := range conns {
		if cn.RevokedAt == nil && (cn.Name == connection || string(cn.ID) == connection) {
			return a.profiles.ReportWorker(ctx, c, project, cn.ID, st)
		}
	}
	return contract.RuntimeStatus{}, contract.Errorf(contract.CodeNotFound, "project %s has no live Connection %.64q; docket connection list names them.", project, connection)
}
