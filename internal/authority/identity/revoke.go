package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// revocable says how to revoke one kind of credential-bearing record R (an Agent, a
// Connection): how to find it by a member's reference, revoke it and read it back.
type revocable[R any] struct {
	noun   string // "agent", as errors name it
	event  string // the event the revocation appends
	find   func(ctx context.Context, r store.Reader, project contract.ProjectID, ref string) (R, error)
	id     func(R) string
	revoke func(ctx context.Context, tx store.Tx, id string, at time.Time) error
	get    func(ctx context.Context, r store.Reader, id string) (R, error)
}

// revoke revokes the record of project that ref names, for member c, and returns it as
// revoked, with its event, in one transaction. Revoking again keeps the first time.
func revoke[R any](ctx context.Context, a *Directory, c Caller, project contract.ProjectID, ref string, k revocable[R]) (R, error) {
	var rec R
	if err := c.RequireMember(project); err != nil {
		return rec, err
	}
	now := a.nowUTC()
	err := a.store.Update(ctx, func(tx store.Tx) error {
		found, err := k.find(ctx, tx, project, ref)
		if err != nil {
			return err
		}
		id := k.id(found)
		if err := k.revoke(ctx, tx, id, now); err != nil {
			return err
		}
		if rec, err = k.get(ctx, tx, id); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, k.event, c.Principal(), now, map[string]string{"id": id})
	})
	if err != nil {
		var zero R
		return zero, fmt.Errorf("revoke %s %s: %w", k.noun, ref, eventlog.Refuse(err, k.noun+" "+ref))
	}
	return rec, nil
}
