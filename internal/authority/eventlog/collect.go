package eventlog

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// A write that appends several events to a log in one transaction (an admission: its
// Board change, the board.recorded event, the Operation; a report: its receipt, the Board
// change and its record, the Operation's change) cost one store call per event. Collect
// holds back the events [Append] and [AppendKeyed] append in a transaction and appends
// them with one [store.Tx.AppendAll]: the same events at the same sequence numbers,
// linked the same, since nothing else appends to the log in between (the transaction
// holds it from its first append, or its lock, to its commit).

// Collect runs fn on a transaction over tx in which the events [Append], [AppendKeyed] and
// [AppendNew] append to project's log are held back, in order, and appended with one
// [store.Tx.AppendAll] when fn returns nil — or before, as soon as fn reads what they
// would change: the log's head ([store.Tx.Head], [store.Tx.LockHead]), its events or
// blobs, or appends to it directly ([store.Tx.Append], [store.Tx.AppendAll], whose events
// then follow the held ones in the same call). So fn reads what it wrote, as in tx.
// [HeadLeft] on it counts the held events without appending them. A held event's own
// refusal (an id already in the log) comes back when they are appended, as the error of
// that call or of Collect, and fails the transaction as it would have at its Append.
// When fn fails, nothing it held is appended.
//
// Inside a Collect of the same log already (tx is one, as in [Held.Update]'s decide),
// fn runs on tx itself: its events are held with the outer ones, in order, and appended
// in the outer call, so nesting costs no store call of its own; when fn fails, the
// events it held are dropped as they would have been.
func Collect(ctx context.Context, tx store.Tx, project contract.ProjectID, fn func(tx store.Tx) error) error {
	if c, ok := tx.(*collectTx); ok && c.project == string(project) {
		held, flushes := len(c.held), c.flushes
		if err := fn(c); err != nil {
			if c.flushes != flushes {
				held = 0 // the outer events were appended with a read of fn's
			}
			clear(c.held[held:])
			c.held = c.held[:held]
			return err
		}
		return nil
	}
	c := &collectTx{Tx: tx, project: string(project)}
	if err := fn(c); err != nil {
		return err
	}
	return c.flush(ctx)
}

// collectTx is a store.Tx that holds back the events appended to one log through this
// package (see [Collect]).
type collectTx struct {
	store.Tx
	project string
	held    []store.NewEvent
	flushes int  // how many times held was appended
	wrote   bool // whether an event of the log was appended through it
}

// add holds ne back when it belongs to the collected log, and reports whether it did.
func add(tx store.Tx, ne store.NewEvent) bool {
	c, ok := tx.(*collectTx)
	if !ok || ne.Project != c.project {
		return false
	}
	c.held = append(c.held, ne)
	return true
}

// flush appends the held events, in one call.
func (c *collectTx) flush(ctx context.Context) error {
	if len(c.held) == 0 {
		return nil
	}
	held := c.held
	c.held = nil
	c.flushes++
	c.wrote = true
	if _, err := c.Tx.AppendAll(ctx, held); err != nil {
		if len(held) == 1 {
			return fmt.Errorf("append %s event: %w", held[0].Type, err)
		}
		return fmt.Errorf("append %d events (%s … %s): %w", len(held), held[0].Type, held[len(held)-1].Type, err)
	}
	return nil
}

// reading appends the held events before a call that reads project's log.
func (c *collectTx) reading(ctx context.Context, project string) error {
	if project != c.project {
		return nil
	}
	return c.flush(ctx)
}

// Append implements [store.Tx.Append]: after the held events, in the same call.
func (c *collectTx) Append(ctx context.Context, e store.NewEvent) (store.Event, error) {
	if e.Project != c.project || len(c.held) == 0 {
		c.wrote = c.wrote || e.Project == c.project
		return c.Tx.Append(ctx, e)
	}
	es, err := c.AppendAll(ctx, []store.NewEvent{e})
	if err != nil {
		return store.Event{}, err
	}
	return es[0], nil
}

// AppendAll implements [store.Tx.AppendAll]: after the held events, in the same call.
func (c *collectTx) AppendAll(ctx context.Context, es []store.NewEvent) ([]store.Event, error) {
	if len(es) == 0 || es[0].Project != c.project || len(c.held) == 0 {
		c.wrote = c.wrote || (len(es) > 0 && es[0].Project == c.project)
		return c.Tx.AppendAll(ctx, es)
	}
	all := append(c.held, es...)
	c.held = nil
	c.flushes++
	c.wrote = true
	evs, err := c.Tx.AppendAll(ctx, all)
	if err != nil {
		return nil, err
	}
	return evs[len(evs)-len(es):], nil
}

// Head implements [store.Reader.Head], the held events appended first.
func (c *collectTx) Head(ctx context.Context, project string) (store.Head, error) {
	if err := c.reading(ctx, project); err != nil {
		return store.Head{}, err
	}
	return c.Tx.Head(ctx, project)
}

// LockHead implements [store.Tx.LockHead], the held events appended first.
func (c *collectTx) LockHead(ctx context.Context, project string) (store.Head, error) {
	if err := c.reading(ctx, project); err != nil {
		return store.Head{}, err
	}
	return c.Tx.LockHead(ctx, project)
}

// Events implements [store.Reader.Events], the held events appended first.
func (c *collectTx) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	if err := c.reading(ctx, project); err != nil {
		return nil, err
	}
	return c.Tx.Events(ctx, project, after, limit)
}

// Blob implements [store.Reader.Blob], the held events appended first (a large event's
// data is stored as a blob when it is appended).
func (c *collectTx) Blob(ctx context.Context, hash store.Hash) ([]byte, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	return c.Tx.Blob(ctx, hash)
}

// seqLeft returns the seq of the collected log's head once the held events are
// appended: they follow its locked head without a gap, so counting them is exact.
func (c *collectTx) seqLeft(ctx context.Context) (int64, error) {
	h, err := c.Tx.LockHead(ctx, c.project)
	if err != nil {
		return 0, fmt.Errorf("read the head of %s: %w", c.project, err)
	}
	return h.Seq + int64(len(c.held)), nil
}
