// Package eventlog holds what every part of the authority does with a project's event log:
// append an event with its data encoded, read the log page by page, and turn a store
// sentinel into a refusal that teaches the caller.
package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// MaxEventPage is the largest page of events one read returns.
const MaxEventPage = 500

// Append appends one event of type typ, by actor at at, with data encoded as JSON, to
// project's log in tx.
func Append(ctx context.Context, tx store.Tx, project contract.ProjectID, typ string, actor contract.Principal, at time.Time, data any) error {
	return AppendKeyed(ctx, tx, project, "", typ, actor, at, data)
}

// AppendKeyed is [Append] under the event id id ("" mints one): a second event of that id
// in project's log is refused with [store.ErrConflict], so a write that may be sent twice
// (a schedule's fire, by two instances) is recorded once.
func AppendKeyed(ctx context.Context, tx store.Tx, project contract.ProjectID, id, typ string, actor contract.Principal, at time.Time, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", typ, err)
	}
	_, err = tx.Append(ctx, store.NewEvent{Project: string(project), ID: id, Type: typ, At: at, Actor: string(actor), Data: b})
	if err != nil {
		return fmt.Errorf("append %s event: %w", typ, err)
	}
	return nil
}

// Scan calls fn for each event of project with after < Seq <= upTo (upTo < 0: to the
// head), read from r page by page.
func Scan(ctx context.Context, r store.Reader, project contract.ProjectID, after, upTo int64, fn func(store.Event) error) error {
	for {
		es, err := r.Events(ctx, string(project), after, MaxEventPage)
		if err != nil {
			return fmt.Errorf("read events of %s: %w", project, err)
		}
		for _, e := range es {
			if upTo >= 0 && e.Seq > upTo {
				return nil
			}
			if err := fn(e); err != nil {
				return err
			}
			after = e.Seq
		}
		if len(es) < MaxEventPage {
			return nil
		}
	}
}

// Refuse maps a store sentinel to a coded error for the caller, keeping the cause; what
// names the record, as in "agent calc".
func Refuse(err error, what string) error {
	var ce *contract.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.Is(err, store.ErrNotFound):
		return &contract.Error{Code: contract.CodeNotFound, Teaching: what + " does not exist; list them to see the names in use.", Err: err}
	case errors.Is(err, store.ErrConflict):
		return &contract.Error{Code: contract.CodeAlreadyExists, Teaching: what + " already exists; choose another name.", Err: err}
	case errors.Is(err, store.ErrClosed):
		return &contract.Error{Code: contract.CodeUnavailable, Teaching: "the authority is shutting down; retry against a running docket serve.", Err: err}
	}
	return err
}

// Cursor is how far one projection (the operation ledger, the hop ledger, the
// conversation index) has applied a project's log. Its zero value is the log's start.
// Every projection catches up through [Cursor.CatchUp], the one loop that reads a log
// forward and applies it.
type Cursor struct{ seq int64 }

// Seq is the sequence number of the last event applied; 0 before any.
func (c *Cursor) Seq() int64 { return c.seq }

// CatchUp applies each event of project after the cursor, read from r (the store, or a
// transaction that sees its own writes), and moves the cursor past each event applied.
// When apply fails the cursor stays on the last event applied.
//
// On a store from [Remember] (or a transaction of one) it reads the log's head and then
// catches up to it as [Cursor.CatchUpTo] does: nothing more is read when the head has
// not moved.
func (c *Cursor) CatchUp(ctx context.Context, r store.Reader, project contract.ProjectID, apply func(store.Event) error) error {
	if tails(r) == nil {
		return c.scan(ctx, r, project, apply)
	}
	head, err := r.Head(ctx, string(project))
	if err != nil {
		return fmt.Errorf("read the head of %s: %w", project, err)
	}
	return c.CatchUpTo(ctx, r, project, head.Seq, apply)
}

// CatchUpTo is [Cursor.CatchUp] for a caller that knows a head of the log to reach (one
// it read or locked, or the head its own commit left): it applies the events after the
// cursor up to at least seq to, taking from memory those this process committed through
// r's store ([Remember]) that continue the cursor, and reads from r only the rest. A
// cursor at to or past it reads nothing.
func (c *Cursor) CatchUpTo(ctx context.Context, r store.Reader, project contract.ProjectID, to int64, apply func(store.Event) error) error {
	if tails(r) == nil {
		if c.seq >= to {
			return nil
		}
		return c.scan(ctx, r, project, apply)
	}
	for {
		for _, e := range Recent(r, project, c.seq, to) {
			if err := c.applyOne(project, e, apply); err != nil {
				return err
			}
		}
		if c.seq >= to {
			return nil
		}
		// Memory lacks the next event: read a page from r, then look in memory again.
		es, err := r.Events(ctx, string(project), c.seq, MaxEventPage)
		if err != nil {
			return fmt.Errorf("read events of %s: %w", project, err)
		}
		for _, e := range es {
			if err := c.applyOne(project, e, apply); err != nil {
				return err
			}
		}
		if len(es) < MaxEventPage {
			return nil // read to the end of the log
		}
	}
}

// applyOne applies e and moves the cursor past it.
func (c *Cursor) applyOne(project contract.ProjectID, e store.Event, apply func(store.Event) error) error {
	if err := apply(e); err != nil {
		return fmt.Errorf("apply event %d of %s: %w", e.Seq, project, err)
	}
	c.seq = e.Seq
	return nil
}

// scan applies every event after the cursor read from r.
func (c *Cursor) scan(ctx context.Context, r store.Reader, project contract.ProjectID, apply func(store.Event) error) error {
	return Scan(ctx, r, project, c.seq, -1, func(e store.Event) error { return c.applyOne(project, e, apply) })
}

// Act runs fn, a part's write to project's log, in one store transaction under the log's
// head lock, on the part's projection caught up with apply inside it first; after the
// commit it catches the projection up to the head the commit left, so the caller reads
// what it wrote. A *contract.Error from fn comes back as it is; another failure of the
// transaction comes back through [Refuse] with what, wrapped with doing. The caller holds
// the projection's lock across Act.
func Act(ctx context.Context, st store.Store, project contract.ProjectID, cur *Cursor, apply func(store.Event) error, doing, what string, fn func(tx store.Tx) error) error {
	var left int64
	err := st.Update(ctx, func(tx store.Tx) error {
		head, err := tx.LockHead(ctx, string(project))
		if err != nil {
			return err
		}
		if err := cur.CatchUpTo(ctx, tx, project, head.Seq, apply); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		left, err = HeadLeft(ctx, tx, project)
		return err
	})
	if err != nil {
		if _, ok := errors.AsType[*contract.Error](err); ok {
			return err
		}
		return fmt.Errorf("%s: %w", doing, Refuse(err, what))
	}
	if err := cur.CatchUpTo(ctx, st, project, left, apply); err != nil {
		return fmt.Errorf("read the log of %s: %w", project, err)
	}
	return nil
}

// HeadLeft returns the seq of project's head as tx will leave it on commit, its own
// appends included: the head a projection catches up to after that commit, so the caller
// reads what it wrote. Call it last in tx, once everything is appended.
func HeadLeft(ctx context.Context, tx store.Tx, project contract.ProjectID) (int64, error) {
	h, err := tx.Head(ctx, string(project))
	if err != nil {
		return 0, fmt.Errorf("read the head of %s: %w", project, err)
	}
	return h.Seq, nil
}
