// Package eventlog holds what every part of the authority does with a project's event log:
// append an event with its data encoded, read the log page by page, and turn a store
// sentinel into a refusal that teaches the caller.
package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// MaxEventPage is the largest page of events one read returns.
const MaxEventPage = 500

// Append appends one event with payload p, by actor at at, to project's log in tx: its
// type is the one p names, so that the type and the data can never disagree.
func Append(ctx context.Context, tx store.Tx, project contract.ProjectID, actor contract.Principal, at time.Time, p event.Payload) error {
	return AppendKeyed(ctx, tx, project, "", actor, at, p)
}

// AppendKeyed is [Append] under the event id id ("" mints one): a second event of that id
// in project's log is refused with [store.ErrConflict], so a write that may be sent twice
// (a schedule's fire, by two instances) is recorded once.
func AppendKeyed(ctx context.Context, tx store.Tx, project contract.ProjectID, id string, actor contract.Principal, at time.Time, p event.Payload) error {
	ne, err := New(project, id, actor, at, p)
	if err != nil {
		return err
	}
	return AppendNew(ctx, tx, ne)
}

// AppendNew appends ne, made by [New], in tx: held back and appended with the others
// in a transaction of [Collect], at once otherwise.
func AppendNew(ctx context.Context, tx store.Tx, ne store.NewEvent) error {
	if add(tx, ne) {
		return nil
	}
	if _, err := tx.Append(ctx, ne); err != nil {
		return fmt.Errorf("append %s event: %w", ne.Type, err)
	}
	return nil
}

// New is the event Append would append, for a writer that appends it itself (to read its
// sequence back, or to append a batch at once).
func New(project contract.ProjectID, id string, actor contract.Principal, at time.Time, p event.Payload) (store.NewEvent, error) {
	typ := p.EventType()
	b, err := json.Marshal(p)
	if err != nil {
		return store.NewEvent{}, fmt.Errorf("encode %s event: %w", typ, err)
	}
	return store.NewEvent{Project: string(project), ID: id, Type: typ, At: at, Actor: string(actor), Data: b}, nil
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

// ErrDiverged: a projection holds an event its log does not, and its cursor has no
// [Cursor.Reset] to rebuild it with. It comes wrapped by the catch-up that found it.
var ErrDiverged = errors.New("eventlog: the projection holds an event the log lacks")

// Cursor is how far one projection (the operation ledger, the conversation index) has
// applied a project's log. Its zero value is the log's start.
// Every projection catches up through [Cursor.CatchUp], the one loop that reads a log
// forward and applies it.
//
// A projection caught up inside a transaction applies what that transaction sees, and
// under group commit that includes the events of the Updates batched before its own,
// which are not committed yet. When the batch's COMMIT then fails, the projection holds
// events the log lacks. So the cursor keeps the hash of the last event applied, checks
// that each event it applies follows it in the chain, and, after applying events read
// inside a transaction, checks on its next catch-up that the log holds the last one
// before it trusts the projection again. A projection found ahead of its log is
// discarded ([Cursor.Reset]) and rebuilt from the log's start by that same catch-up:
// failing closed costs one rebuild after a failed commit, where trusting memory would
// keep a projection ahead of the log until the process restarts.
type Cursor struct {
	// Reset, when set, discards everything apply applied, so the catch-up that finds the
	// projection diverged from its log rebuilds it from the start. It runs under the
	// projection's lock, which the caller of the catch-up holds. Nil: that catch-up fails
	// with [ErrDiverged], and so does every one after it.
	Reset func()

	seq  int64
	hash store.Hash // of the event at seq; zero at the log's start
	// unsure: events up to seq were applied inside a transaction and were not seen
	// committed since (read from memory or from the store after it).
	unsure bool
	// started: seq and hash were given by [Cursor.Start], and no event was applied since,
	// so an event that does not link to them says the projection its part made there is
	// not the log there, not that the log lacks an event ([divergence]).
	started bool
	// recent holds the events a catch-up takes from memory ([appendRecent]), emptied and
	// reused by the next: a catch-up runs under the projection's lock, and nothing keeps
	// the slice once its events are applied (an event is applied by value).
	recent []store.Event
}

// Seq is the sequence number of the last event applied; 0 before any.
func (c *Cursor) Seq() int64 { return c.seq }

// Start moves the cursor to seq, hash being the hash of the event there (zero at the
// log's start), for a projection its part made at seq rather than by applying the log up
// to it: one built from the tables the store keeps beside the log, or one changed in
// memory by a write that then committed, or built again after its COMMIT failed. The
// projection must be the log at seq exactly, every event up to it committed. The next
// catch-up applies the events after seq, the first only when it links to hash: one that
// does not means the projection diverged from its log ([Cursor.Reset]).
func (c *Cursor) Start(seq int64, hash store.Hash) {
	c.seq, c.hash, c.unsure, c.started = seq, hash, false, true
}

// divergence is how a cursor found its projection off its log: the warning a rebuild
// logs ([Remember]) names it, since each has its own cause to look for.
type divergence uint8

const (
	// divergedInTx: the events up to the cursor were applied inside a transaction and
	// the log lacks them: a write whose COMMIT failed, the caller's or, under group
	// commit, a batch-mate's (see [Cursor]).
	divergedInTx divergence = iota
	// divergedAtStart: the log's next event does not link to the seq and hash the
	// projection's part gave ([Cursor.Start], [Held.Remake]) for a projection it made
	// there (a Board built from the store's tables, or changed by its own write that
	// committed): what the part made is not the log there.
	divergedAtStart
	// divergedCommitted: the log's next event does not link to one the cursor applied
	// and saw committed: the log changed under the projection (a database restored or
	// replaced while the process ran).
	divergedCommitted
)

// warning is what the log says of a projection rebuilt after d.
func (d divergence) warning() string {
	switch d {
	case divergedInTx:
		return "a projection held events applied inside a transaction that its log lacks (a write whose COMMIT failed) and was rebuilt from the log"
	case divergedAtStart:
		return "a projection its part made at a seq of the log (built from the store, or changed by a write that committed) does not link to the log's next event and was rebuilt from the log"
	default:
		return "a projection's last committed event is not followed by the log's next one (the log changed under it) and was rebuilt from the log"
	}
}

// errRebuilt tells a catch-up loop that the cursor was reset and starts again; how and
// seq say what the cursor found, and where, for the warning ([Remember]).
type errRebuilt struct {
	how divergence
	seq int64 // the cursor's seq when it found it
}

func (e *errRebuilt) Error() string {
	return fmt.Sprintf("the projection was rebuilt from the start after event %d", e.seq)
}

// CatchUp applies each event of project after the cursor, read from r (the store, or a
// transaction that sees its own writes), and moves the cursor past each event applied.
// When apply fails the cursor stays on the last event applied.
//
// On a store from [Remember] (or a transaction of one) it reads the log's head and then
// catches up to it as [Cursor.CatchUpTo] does: nothing more is read when the head has
// not moved.
//
// Read on the store (not in a transaction) under a ctx from [WithHead] for project, it
// catches up to that head instead of reading the head again.
func (c *Cursor) CatchUp(ctx context.Context, r store.Reader, project contract.ProjectID, apply func(store.Event) error) error {
	if tails(r) == nil {
		return c.CatchUpTo(ctx, r, project, math.MaxInt64, apply)
	}
	if _, inTx := r.(store.Tx); !inTx {
		if seq, ok := KnownHead(ctx, project); ok {
			return c.CatchUpTo(ctx, r, project, seq, apply)
		}
	}
	head, err := r.Head(ctx, string(project))
	if err != nil {
		return fmt.Errorf("read the head of %s: %w", project, err)
	}
	return c.CatchUpTo(ctx, r, project, head.Seq, apply)
}

// WithHead returns ctx carrying seq, a head of project's log read on the store during
// the call ctx belongs to: the catch-ups of the call's reads on the store under it
// ([Cursor.CatchUp]) reach that head without reading it again, so the parts of one call
// (its Board, its agent's Operations, the policies in force) read the log at one point.
// Each of them is then as fresh as a read made when that head was read, within the same
// call. Give it only to reads that precede the call's own writes, which check what they
// decide on under the head lock and catch up to the head their commit left.
func WithHead(ctx context.Context, project contract.ProjectID, seq int64) context.Context {
	return context.WithValue(ctx, headKey{}, knownHead{project: project, seq: seq})
}

// KnownHead returns the head of project's log ctx carries ([WithHead]), if any.
func KnownHead(ctx context.Context, project contract.ProjectID) (int64, bool) {
	h, ok := ctx.Value(headKey{}).(knownHead)
	return h.seq, ok && h.project == project
}

// headKey is the context key of a head read once for a call ([WithHead]).
type headKey struct{}

// knownHead is a head read once for a call.
type knownHead struct {
	project contract.ProjectID
	seq     int64
}

// CatchUpTo is [Cursor.CatchUp] for a caller that knows a head of the log to reach (one
// it read or locked, or the head its own commit left): it applies the events after the
// cursor up to at least seq to, taking from memory those this process committed through
// r's store ([Remember]) that continue the cursor, and reads from r only the rest. A
// cursor at to or past it reads nothing, unless it must first check that the log holds
// what it applied inside a transaction.
func (c *Cursor) CatchUpTo(ctx context.Context, r store.Reader, project contract.ProjectID, to int64, apply func(store.Event) error) error {
	rebuilt := false
	if _, err := c.again(r, c.confirm(ctx, r, project), project, &rebuilt); err != nil {
		return err
	}
	if tails(r) == nil {
		if c.seq >= to {
			return nil
		}
		return c.scan(ctx, r, project, apply, &rebuilt)
	}
	_, inTx := r.(store.Tx)
	for {
		c.recent = appendRecent(c.recent[:0], r, project, c.seq, to)
		err := c.applyAll(project, c.recent, true, apply)
		clear(c.recent) // drop the events' data, which the buffer would keep alive
		again, err := c.again(r, err, project, &rebuilt)
		if err != nil {
			return err
		}
		if again {
			continue
		}
		if c.seq >= to {
			return nil
		}
		// Memory lacks the next event: read a page from r, then look in memory again.
		es, err := r.Events(ctx, string(project), c.seq, MaxEventPage)
		if err != nil {
			return fmt.Errorf("read events of %s: %w", project, err)
		}
		if again, err = c.again(r, c.applyAll(project, es, !inTx, apply), project, &rebuilt); err != nil {
			return err
		}
		if !again && len(es) < MaxEventPage {
			return nil // read to the end of the log
		}
	}
}

// again reports whether a catch-up starts over after err: once, after the cursor was
// reset (errRebuilt). A second reset in one catch-up means the log itself does not
// chain, and rebuilding again would find the same.
func (c *Cursor) again(r store.Reader, err error, project contract.ProjectID, rebuilt *bool) (bool, error) {
	reset, ok := errors.AsType[*errRebuilt](err)
	if !ok {
		return false, err
	}
	if *rebuilt {
		return false, fmt.Errorf("catch up the log of %s: event %d does not follow the one before it, read from the start: %w", project, c.seq+1, ErrDiverged)
	}
	*rebuilt = true
	if m := tails(r); m != nil {
		m.rebuilt(project, reset.how, reset.seq)
	}
	return true, nil
}

// confirm checks, when the cursor applied events inside a transaction, that the log as
// r sees it holds the last of them; else it resets the cursor (see [Cursor]). Memory
// holds only committed events, so finding it there, or the next one linked to it, settles
// it without a read; read from the store rather than a transaction, it is committed too.
func (c *Cursor) confirm(ctx context.Context, r store.Reader, project contract.ProjectID) error {
	if !c.unsure {
		return nil
	}
	c.recent = appendRecent(c.recent[:0], r, project, c.seq-1, c.seq)
	if es := c.recent; len(es) == 1 && es[0].Hash == c.hash {
		c.unsure = false
		return nil
	}
	// Or memory holds the next event, linked to it: the first of the caller's own
	// commit, after a catch-up inside its transaction.
	c.recent = appendRecent(c.recent[:0], r, project, c.seq, c.seq+1)
	if es := c.recent; len(es) == 1 && es[0].PrevHash == c.hash {
		c.unsure = false
		return nil
	}
	es, err := r.Events(ctx, string(project), c.seq-1, 1)
	if err != nil {
		return fmt.Errorf("read event %d of %s: %w", c.seq, project, err)
	}
	if len(es) == 1 && es[0].Seq == c.seq && es[0].Hash == c.hash {
		_, inTx := r.(store.Tx)
		c.unsure = inTx // in a transaction it may be a batch-mate's, not committed yet
		return nil
	}
	return c.diverged(project)
}

// applyAll applies es in order; committed says they were read outside a transaction.
func (c *Cursor) applyAll(project contract.ProjectID, es []store.Event, committed bool, apply func(store.Event) error) error {
	for _, e := range es {
		if err := c.applyOne(project, e, committed, apply); err != nil {
			return err
		}
	}
	return nil
}

// applyOne applies e, which must follow the cursor in the chain, and moves the cursor
// past it. An event that does not follow it means the projection diverged from the log:
// the cursor is reset and applyOne returns errRebuilt (or [ErrDiverged] without Reset).
func (c *Cursor) applyOne(project contract.ProjectID, e store.Event, committed bool, apply func(store.Event) error) error {
	if e.Seq != c.seq+1 || e.PrevHash != c.hash {
		return c.diverged(project)
	}
	if err := apply(e); err != nil {
		return fmt.Errorf("apply event %d of %s: %w", e.Seq, project, err)
	}
	c.seq, c.hash, c.started = e.Seq, e.Hash, false
	// A committed event that links to what was applied before proves that committed too.
	c.unsure = !committed
	return nil
}

// diverged resets the cursor and its projection, returning an errRebuilt that says how
// it diverged, or returns [ErrDiverged] when the cursor has no Reset.
func (c *Cursor) diverged(project contract.ProjectID) error {
	if c.Reset == nil {
		return fmt.Errorf("catch up the log of %s at event %d: %w", project, c.seq, ErrDiverged)
	}
	reset := &errRebuilt{how: divergedCommitted, seq: c.seq}
	switch {
	case c.unsure:
		reset.how = divergedInTx
	case c.started:
		reset.how = divergedAtStart
	}
	c.Reset()
	c.seq, c.hash, c.unsure, c.started = 0, store.Hash{}, false, false
	return reset
}

// scan applies every event after the cursor read from r, starting again from the log's
// start when the projection is reset.
func (c *Cursor) scan(ctx context.Context, r store.Reader, project contract.ProjectID, apply func(store.Event) error, rebuilt *bool) error {
	_, inTx := r.(store.Tx)
	for {
		err := Scan(ctx, r, project, c.seq, -1, func(e store.Event) error { return c.applyOne(project, e, !inTx, apply) })
		if again, err := c.again(r, err, project, rebuilt); !again {
			return err
		}
	}
}

// RefuseWrite is what a part's write that failed ([Driver.Write], [Held.Update]) returns
// to its caller: a *contract.Error as it is, since it already teaches; another failure
// through [Refuse] with what, wrapped with doing.
func RefuseWrite(err error, doing, what string) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*contract.Error](err); ok {
		return err
	}
	return fmt.Errorf("%s: %w", doing, Refuse(err, what))
}

// HeadLeft returns the seq of project's head as tx will leave it on commit, its own
// appends included: the head a projection catches up to after that commit, so the caller
// reads what it wrote. Call it last in tx, once everything is appended.
//
// In a transaction of [Collect], the events it holds back count without being appended.
func HeadLeft(ctx context.Context, tx store.Tx, project contract.ProjectID) (int64, error) {
	if c, ok := tx.(*collectTx); ok && c.project == string(project) && len(c.held) > 0 {
		return c.seqLeft(ctx)
	}
	h, err := tx.Head(ctx, string(project))
	if err != nil {
		return 0, fmt.Errorf("read the head of %s: %w", project, err)
	}
	return h.Seq, nil
}
