package authority

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Workers returns each live Connection of project with its lease as the store's lease
// row holds it (held, expired or never), its Tool locks and its Sources.
func (a *Authority) Workers(ctx context.Context, c Caller, project contract.ProjectID) ([]contract.WorkerStatus, error) {
	conns, err := a.Connections(ctx, c, project)
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
		l, err := a.store.Lease(ctx, string(cn.ID))
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("read the lease of %s: %w", cn.ID, eventlog.Refuse(err, "connection "+cn.Name))
		case l.Generation == 0:
		default:
			ws.WorkerID, ws.Generation, ws.ExpiresAt = l.WorkerID, l.Generation, &l.ExpiresAt
			ws.Lease = contract.LeaseExpired
			if now.Before(l.ExpiresAt) {
				ws.Lease = contract.LeaseHeld
			}
		}
		if ws.Tools, err = a.ToolLocks(ctx, c, project, string(cn.ID)); err != nil {
			return nil, err
		}
		if ws.Sources, err = a.Sources(ctx, c, project, string(cn.ID)); err != nil {
			return nil, err
		}
		out = append(out, ws)
	}
	return out, nil
}
