package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// The one revocation, listing and lookup of the records a member manages by name: Agents
// and Connections.

// revocable says how to revoke one kind of credential-bearing record R (an Agent, a
// Connection): how to find it by a member's reference, revoke it and read it back.
type revocable[R any] struct {
	noun   string                        // "agent", as errors name it
	event  func(id string) event.Payload // the event the revocation appends
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
		return eventlog.Append(ctx, tx, project, c.Principal(), now, k.event(id))
	})
	if err != nil {
		var zero R
		return zero, fmt.Errorf("revoke %s %s: %w", k.noun, ref, eventlog.Refuse(err, k.noun+" "+ref))
	}
	a.revoked()
	return rec, nil
}

// listed returns project's records of one kind, read by list, as the wire has them, for
// member c; what names them in errors ("agents").
func listed[R, W any](ctx context.Context, c Caller, project contract.ProjectID, what string,
	list func(ctx context.Context, project string) ([]R, error), wire func(R) W) ([]W, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	rs, err := list(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, eventlog.Refuse(err, "project "+string(project)))
	}
	out := make([]W, 0, len(rs))
	for _, r := range rs {
		out = append(out, wire(r))
	}
	return out, nil
}

// findByRef finds, among project's records read by list, the one whose id or name is
// ref; noun names the kind in the error ("agent").
func findByRef[R any](ctx context.Context, project contract.ProjectID, ref, noun string,
	list func(ctx context.Context, project string) ([]R, error), key func(R) (id, name string)) (R, error) {
	rs, err := list(ctx, string(project))
	if err != nil {
		var zero R
		return zero, err
	}
	for _, r := range rs {
		if id, name := key(r); id == ref || name == ref {
			return r, nil
		}
	}
	var zero R
	return zero, fmt.Errorf("%s %q in project %s: %w", noun, ref, project, store.ErrNotFound)
}
