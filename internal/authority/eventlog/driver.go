package eventlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// State is what a part projects from one project's log: a pure value stepped by the log's
// events in order. Apply does no I/O, takes no lock and reads no clock (an event's time is
// e.At), so two instances that applied the same log hold the same State
// (docs/architecture.md, "The project state and its driver").
type State interface {
	Apply(e store.Event) error
}

// Log drives one log per project for the parts that join it ([Join]): per project ONE
// mutex, ONE [Cursor] and ONE follow goroutine, whatever the number of parts, each
// keeping its own State beside the others (docs/architecture.md, "The project state and
// its driver"). A catch-up applies each event to every joined part's State, in join
// order, and notifies each part for its own ([Driver.OnApply]); a release of the lock
// publishes the snapshot of each part whose State moved ([Driver.Publish]); a rebuild
// (the cursor found the States ahead of the log, or a hash that does not link) gives
// every part a fresh State. So a rule of one part may read another's State under the one
// lock ([Along]) rather than take a second lock inside the first. It is safe for
// concurrent use.
type Log struct {
	store store.Store

	mu       sync.Mutex // guards parts and projects; held only to find or create an entry, or to join
	parts    []joiner   // in join order
	projects map[contract.ProjectID]*project

	// The follow goroutines ([Driver.Follow]) are l's own: each runs under life, and
	// [Log.Close] ends life and waits for every one. followMu guards closed and the
	// goroutines' Add, so that none starts once Close waits; it is taken under a
	// project's follow mutex, never around one.
	life     context.Context
	end      context.CancelFunc
	followMu sync.Mutex
	closed   bool
	follows  sync.WaitGroup
}

// NewLog returns the Log of st's projects, with no part joined yet.
func NewLog(st store.Store) *Log {
	l := &Log{store: st, projects: map[contract.ProjectID]*project{}}
	l.life, l.end = context.WithCancel(context.Background())
	return l
}

// Store returns the store l reads and writes the logs through.
func (l *Log) Store() store.Store { return l.store }

// joiner is a part joined to a Log: it makes its member of a project.
type joiner interface {
	member(p *project) member
}

// member is one part's State of one project, as the project's log drives it; every
// method runs under the project's lock.
type member interface {
	apply(ctx context.Context, r store.Reader, e store.Event) error // apply e to the State (loading what it asks for, [Loader]), then notify the part
	reset()                                                         // replace the State by a fresh one (a rebuild)
	publish()                                                       // hand out the State's snapshot when it moved
	followFailed(err error)                                         // tell the part its follow goroutine ended early
}

// project is one project's log under its one lock: the cursor and the joined parts'
// States.
type project struct {
	id  contract.ProjectID
	log *Log
	// lock is the project's mutex, a channel of one so that a call may give up waiting
	// for it ([Driver.LockWithin]).
	lock   chan struct{}
	cursor Cursor
	// members are the joined parts' States, by join index; the slice is replaced, never
	// changed, by a late [Join], so it is read without the lock.
	members atomic.Pointer[[]member]
	// built is how many of members the cursor drives: a part that joined after the
	// project's first use holds a fresh State, so the first lock after its join
	// rebuilds every State from the log's start (see [Join]). Guarded by lock.
	built int

	// The project's follow goroutine ([Driver.Follow]), guarded by fmu, which is taken
	// under the lock when both are, never around it: followers counts, by join index,
	// the stop functions not called yet (following says whether the goroutine runs,
	// followCtx is what it waits under, ended by the last stop) and followErr says why
	// the last one ended early ([Held.FollowErr]).
	fmu        sync.Mutex
	followers  map[int]int
	following  bool
	followCtx  context.Context
	followStop context.CancelFunc
	followErr  error
}

// entry returns project's entry, created on first use and never removed.
func (l *Log) entry(id contract.ProjectID) *project {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.projects[id]
	if p == nil {
		p = &project{id: id, log: l, lock: make(chan struct{}, 1), followers: map[int]int{}}
		ms := make([]member, 0, len(l.parts))
		for _, j := range l.parts {
			ms = append(ms, j.member(p))
		}
		p.members.Store(&ms)
		p.built = len(ms)
		p.cursor.Reset = p.reset
		l.projects[id] = p
	}
	return p
}

// reset gives every State the cursor drives a fresh one: the cursor's Reset.
func (p *project) reset() {
	for _, m := range (*p.members.Load())[:p.built] {
		m.reset()
	}
}

// acquire takes p's lock, waiting for it; see [project.locked].
func (p *project) acquire() {
	p.lock <- struct{}{}
	p.locked()
}

// locked runs once p's lock was taken: a part joined since the last lock holds a fresh
// State while the cursor is past the log's start, so the cursor starts again from the
// log's start and the next catch-up applies the log to the part joined late, while each
// State that applied it already skips what it applied ([Held.apply]): the States all
// stand at the one cursor again, and none is made again for a part that came late (the
// Board it holds, built from the store, stays built). A cursor that applied events
// inside a transaction not seen committed since cannot vouch for what the States hold,
// so every State starts again from a fresh one then, and the catch-up rebuilds them all.
func (p *project) locked() {
	ms := *p.members.Load()
	if p.built == len(ms) {
		return
	}
	p.built = len(ms)
	if p.cursor.unsure {
		p.reset()
	}
	p.cursor.seq, p.cursor.hash, p.cursor.unsure, p.cursor.started = 0, store.Hash{}, false, false
}

// release publishes each State's snapshot that moved and releases p's lock.
func (p *project) release() {
	if len(p.lock) == 0 {
		panic("eventlog: Unlock of a State that is not held")
	}
	for _, m := range (*p.members.Load())[:p.built] {
		m.publish()
	}
	<-p.lock
}

// applier returns the apply function of a catch-up that reads the log through r under
// ctx: it applies each event to each State the cursor drives, in join order, and a
// [Loader] reads through r what its State asks for.
func (p *project) applier(ctx context.Context, r store.Reader) func(store.Event) error {
	return func(e store.Event) error {
		for _, m := range (*p.members.Load())[:p.built] {
			if err := m.apply(ctx, r, e); err != nil {
				return err
			}
		}
		return nil
	}
}

// Driver is one part's way into the project logs of a [Log] it joined ([Join]), or of a
// Log of its own ([NewDriver]): it keeps the part's State per project caught up with the
// project's log, and is the one path the part writes that log through: the project's
// one mutex and one [Cursor], one catch-up loop, one write sequence ([Held.Update], or
// [Held.UpdateWith] for a write that locks something before the log's head, only reads
// the head, or checks what it keeps beside the State at it), and one notification of
// what applied ([Driver.OnApply]). A part keeps its rules as functions over its State
// and calls them inside [Driver.Read] or [Driver.Write]. A part that waits for the log
// to move (a held call) follows it ([Driver.Follow]) rather than poll the store. It is
// safe for concurrent use.
type Driver[S State] struct {
	log   *Log
	index int      // the part's place in the log's join order
	fresh func() S // the State of an empty log

	onApply    func(project contract.ProjectID, s S, e store.Event) // see [Driver.OnApply]; set before first use
	publish    func(s S) any                                        // see [Driver.Publish]; set before first use
	onFollowed func(project contract.ProjectID, err error)          // see [Driver.OnFollowError]; set before first use
}

// NewDriver returns the Driver of st's projects on a [Log] of its own, which no other
// part joins; fresh returns the State of an empty log, for a project's first use and for
// a rebuild after the State was found ahead of its log ([Cursor]).
func NewDriver[S State](st store.Store, fresh func() S) *Driver[S] {
	return Join(NewLog(st), fresh)
}

// Join makes a part of l whose State fresh returns for an empty log, and returns its
// Driver: from then on each catch-up of a project's log, whichever part makes it, applies
// each event to this part's State after those of the parts that joined before it, under
// the project's one lock. Parts join when they are wired, before the log's first use; a
// part that joins later (the operation ledger, wired once the Boards were restored) has
// every project already in use catch the log up from its start at the next lock: the
// late part's State applies it all, and the others skip what they applied (neither
// applied again nor notified again), so that all the States stand at the one cursor
// ([project.locked]). Join must not be called under a project's lock.
func Join[S State](l *Log, fresh func() S) *Driver[S] {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := &Driver[S]{log: l, index: len(l.parts), fresh: fresh}
	l.parts = append(l.parts, d)
	for _, p := range l.projects {
		ms := append(slices.Clone(*p.members.Load()), d.member(p))
		p.members.Store(&ms)
	}
	return d
}

// member implements joiner: the part's State of p, fresh.
func (d *Driver[S]) member(p *project) member {
	return &Held[S]{p: p, drv: d, project: p.id, state: d.fresh()}
}

// Log returns the Log d joined.
func (d *Driver[S]) Log() *Log { return d.log }

// OnApply makes fn the Driver's applied notification: it is called after each event a
// State applies, with the project, the State that applied it and the event, in the
// log's order, in the goroutine that holds the project's lock (so fn may use what the
// part keeps beside the State under that lock, and must not take it). It is called once
// per application: a rebuild ([Cursor]) applies the log again from its start to a fresh
// State, and fn sees those events again, on the new State. An event applied inside a
// transaction whose COMMIT then failed was notified too, as the State applied it; the
// rebuild that follows notifies the log as it is. An event the State refuses to apply
// is not notified. A part keeps what depends on its State's changes but is no part of
// it (the calls held on an Operation) up to date this way, rather than have its State
// list what moved. Set it before d's first use, and only once.
func (d *Driver[S]) OnApply(fn func(project contract.ProjectID, s S, e store.Event)) {
	d.onApply = fn
}

// Publish makes fn the Driver's snapshot of a State: a value derived from the State that
// nothing changes once fn returned it (fn copies what Apply later mutates), which reads
// take without the project's lock ([Driver.Snapshot]), so a read never waits for a write
// that holds the State across its store transaction (docs/architecture.md, "The project
// state and its driver"). The Driver calls fn under the project's lock when the lock is
// released ([Held.Unlock]) with the State past the last snapshot's seq and holding only
// events seen committed: a State that applied events inside a transaction publishes
// nothing until a catch-up finds them in the log, so a snapshot never holds an event a
// failed COMMIT lost. fn may keep what it needs to derive the next snapshot from this
// one in the State (the parts that changed since), since it runs under the lock. Set it
// before d's first use, and only once.
func (d *Driver[S]) Publish(fn func(s S) any) {
	d.publish = fn
}

// Snapshot is what a State handed out for reads made without its lock ([Driver.Publish]):
// Value reflects the project's log up to Seq and not past it, and is never changed.
type Snapshot struct {
	Seq   int64
	Value any
}

// Snapshot returns the last snapshot published of project's State, and false when none
// was (no [Driver.Publish], or the State was never caught up and released). A caller
// answers from it only when Seq covers the head it must answer at (a head it read, so
// that the answer is as fresh as a read of that head), and locks the State otherwise.
func (d *Driver[S]) Snapshot(project contract.ProjectID) (Snapshot, bool) {
	p := d.entry(project).snap.Load()
	if p == nil {
		return Snapshot{}, false
	}
	return *p, true
}

// Held is one part's State of one project under the project's lock. A caller holds it
// between [Driver.Lock] and [Held.Unlock] (or, for another part of the same [Log], from
// [Along] on one held); its methods must not be called otherwise.
type Held[S State] struct {
	project contract.ProjectID
	p       *project
	drv     *Driver[S]
	state   S
	// seq is the last event state applied, or the seq it was made at
	// ([Held.Remake]): an event at or below it is not applied again when the cursor
	// starts again from the log's start for a part joined late ([project.locked]).
	seq int64
	// snap is the last snapshot published ([Driver.Publish]); read without the lock.
	snap atomic.Pointer[Snapshot]
}

// Holding is a project's log held under its lock by one of the parts of its [Log]: a
// [Held] of any State. A rule of another part takes its own State through it ([Along]).
type Holding interface {
	heldProject() *project
}

func (h *Held[S]) heldProject() *project { return h.p }

// Along returns d's State of the project h holds, under the lock h holds: for a rule of
// one part that reads another part's State of the same project inside a call holding the
// first (a decision reading the policy in force under the operation ledger), which must
// not lock again, since the lock is the one h holds. The States stand at one cursor, so
// the State returned is caught up as far as h's (its catch-ups are h's). The caller must
// not [Held.Unlock] what Along returns: the lock is h's. Along panics when d is not a
// part of the Log h's Driver joined (its lock is another), when h is not locked, or when
// d joined after h's lock was taken: each a wiring error that no retry mends.
func Along[T State](h Holding, d *Driver[T]) *Held[T] {
	p := h.heldProject()
	if p.log != d.log {
		panic("eventlog: Along with a Driver of another Log: its State is under another lock")
	}
	if len(p.lock) == 0 {
		panic("eventlog: Along with a State that is not held")
	}
	if d.index >= p.built {
		panic("eventlog: Along with a part that joined its Log after the lock was taken")
	}
	return (*p.members.Load())[d.index].(*Held[T])
}

// Lock locks project's State and returns it; the caller must [Held.Unlock] it. It locks
// the project's log, so every part of d's [Log] waits for it. A part that reads, decides
// and writes in several steps under one lock (a claim that may find its answer in
// memory) uses it; others use [Driver.Read] and [Driver.Write].
func (d *Driver[S]) Lock(project contract.ProjectID) *Held[S] {
	h := d.entry(project)
	h.p.acquire()
	return h
}

// entry returns d's State of project, created on first use and never removed.
func (d *Driver[S]) entry(project contract.ProjectID) *Held[S] {
	return (*d.log.entry(project).members.Load())[d.index].(*Held[S])
}

// LockWithin is [Driver.Lock] for a call made from inside another writer's transaction:
// it waits for project's State at most wait, and returns false when the State stays held
// that long (or ctx ends first). That transaction holds the log's head, and the holder of
// the State may be waiting for the head in its own write, so waiting there for good
// could wait forever (see [ErrBusy]); most holders only read (a catch-up, a
// [Driver.Read]) and free the State within the bound, so such a call rarely has to end
// its transaction and run again.
func (d *Driver[S]) LockWithin(ctx context.Context, project contract.ProjectID, wait time.Duration) (*Held[S], bool) {
	h := d.entry(project)
	select {
	case h.p.lock <- struct{}{}:
		h.p.locked()
		return h, true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case h.p.lock <- struct{}{}:
		h.p.locked()
		return h, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}

// ErrBusy: a State was asked for from inside a transaction while another call held it
// past the bound of [Driver.LockWithin]. The transaction should end and run again: the
// holder goes on once the head is free.
var ErrBusy = errors.New("eventlog: the project's State is held by a write that may be waiting for this transaction")

// Read runs fn on project's State caught up with its log (to the head ctx carries, see
// [WithHead], or to the head read once).
func (d *Driver[S]) Read(ctx context.Context, project contract.ProjectID, fn func(s S) error) error {
	h := d.Lock(project)
	defer h.Unlock()
	s, err := h.CatchUp(ctx, d.log.store)
	if err != nil {
		return err
	}
	return fn(s)
}

// Write runs decide in the write sequence of [Held.Update] under project's lock.
func (d *Driver[S]) Write(ctx context.Context, project contract.ProjectID, decide func(tx store.Tx, s S) error) error {
	h := d.Lock(project)
	defer h.Unlock()
	return h.Update(ctx, decide)
}

// Unlock releases the project's lock, first publishing the snapshot of each part's State
// that moved ([Driver.Publish]). The caller must not keep the State past it.
func (h *Held[S]) Unlock() { h.p.release() }

// publish hands out the State's snapshot at the cursor, when the Driver has one, the
// State is past the last one published, and every event it applied was seen committed
// (a catch-up inside a transaction may have applied a batch-mate's event a failed COMMIT
// then loses; [Cursor] confirms it at its next catch-up). Snapshots only move forward:
// a State rebuilt to an earlier head publishes once it passes the last one, which still
// reflects the log up to its seq. h must be locked.
func (h *Held[S]) publish() {
	fn, c := h.drv.publish, &h.p.cursor
	if fn == nil || c.unsure || c.seq == 0 {
		return
	}
	if p := h.snap.Load(); p != nil && p.Seq >= c.seq {
		return
	}
	h.snap.Store(&Snapshot{Seq: c.seq, Value: fn(h.state)})
}

// Remake makes s the State at the project's cursor, where every part's State stands: for
// a part of a [Log] several parts joined whose State is not only ever made by applying
// the log (the Board, built from the store's tables once the log was caught up to the
// head it read before them, or changed in memory by a write whose commit it was then
// caught up to). The other parts' States stay as they are, and so does the cursor, so s
// must be the log at [Held.Seq] exactly, every event up to it committed; the next
// catch-up applies what follows to s. Until an event is applied, one that does not link
// to the cursor is said to be a State its part made at a seq that the log does not link
// to ([Cursor.Start]); the rebuild gives every part a fresh
// State as for any divergence. h must be locked.
func (h *Held[S]) Remake(s S) {
	h.state, h.seq = s, h.p.cursor.seq
	h.p.cursor.started = true
}

// Committed reports whether every event the States applied was seen committed: false
// after a catch-up inside a transaction applied events (under group commit, perhaps a
// batch-mate's that a failed COMMIT then loses) that no catch-up since found in the log
// ([Cursor]). A part that hands out what it derives from its State by its own means
// (the Board's published Views) hands out nothing while it is false, as
// [Driver.Publish] does. h must be locked.
func (h *Held[S]) Committed() bool { return !h.p.cursor.unsure }

// State returns the State as far as it was caught up; [Held.Seq] says how far.
func (h *Held[S]) State() S { return h.state }

// Seq is the sequence number of the last event the State applied.
func (h *Held[S]) Seq() int64 { return h.p.cursor.Seq() }

// Loader is a State that must read something by id before it can apply an event that
// names it (the Board: the release an install names, content-addressed and immutable).
// Its Apply stays pure: it refuses the event with an error that says what it lacks, and
// the catch-up, which holds the project's lock and the reader it reads the log through
// (the store, or a transaction that sees its own writes), calls Load with that refusal;
// Load reads what it names through r, hands it to the State, and reports whether Apply
// is to run again. A refusal Load does not mend stands: it fails the catch-up, for every
// part of the [Log], so a Loader that can live without what it read (the Board is built
// again from the store instead) makes its next Apply succeed rather than report false.
type Loader interface {
	Load(ctx context.Context, r store.Reader, e store.Event, refused error) (again bool, err error)
}

// apply applies e to the State the Held holds now (a rebuild replaces it mid catch-up,
// so the State is looked up at each event, never bound once), after what a [Loader]
// reads for it, then notifies it ([Driver.OnApply]).
func (h *Held[S]) apply(ctx context.Context, r store.Reader, e store.Event) error {
	if e.Seq <= h.seq {
		return nil // applied before a part joined late and the cursor started again
	}
	err := h.state.Apply(e)
	if ld, ok := any(h.state).(Loader); ok {
		for err != nil {
			again, lerr := ld.Load(ctx, r, e, err)
			if lerr != nil {
				return fmt.Errorf("load what event %d names: %w", e.Seq, lerr)
			}
			if !again {
				break
			}
			err = h.state.Apply(e)
		}
	}
	if err != nil {
		return err
	}
	h.seq = e.Seq
	if fn := h.drv.onApply; fn != nil {
		fn(h.project, h.state, e)
	}
	return nil
}

// reset replaces the State by a fresh one, for a rebuild ([Cursor.Reset]).
func (h *Held[S]) reset() { h.state, h.seq = h.drv.fresh(), 0 }

// CatchUp applies the events after the project's cursor, read from r (the store, or a
// transaction that sees its own writes), to every part's State ([Cursor.CatchUp]), and
// returns h's.
func (h *Held[S]) CatchUp(ctx context.Context, r store.Reader) (S, error) {
	if err := h.p.cursor.CatchUp(ctx, r, h.project, h.p.applier(ctx, r)); err != nil {
		var zero S
		return zero, fmt.Errorf("catch up the log of %s: %w", h.project, err)
	}
	return h.state, nil
}

// CatchUpTo applies the events after the project's cursor up to at least seq to, a head
// of the log the caller read or locked ([Cursor.CatchUpTo]), to every part's State, and
// returns h's.
func (h *Held[S]) CatchUpTo(ctx context.Context, r store.Reader, to int64) (S, error) {
	if err := h.p.cursor.CatchUpTo(ctx, r, h.project, to, h.p.applier(ctx, r)); err != nil {
		var zero S
		return zero, fmt.Errorf("catch up the log of %s: %w", h.project, err)
	}
	return h.state, nil
}

// Update is the one write sequence: in one store transaction it locks the log's head
// (the one read of the head; nothing else appends to the log until the transaction
// ends), catches the State up with what the transaction sees, and runs decide, which
// appends its events through tx, held back and appended in one call ([Collect]); after
// the commit the State applies them, from memory when this process remembers them
// ([Remember]), so the caller reads what it wrote. Under group commit the State may
// apply, inside the transaction, events of the batch's other writes that a failed
// COMMIT then loses: its cursor finds that at the next catch-up and rebuilds the State
// ([Cursor]). A decide that fails appends nothing; its error comes back as it was
// returned. It is [Held.UpdateWith] with the zero [Write].
func (h *Held[S]) Update(ctx context.Context, decide func(tx store.Tx, s S) error) error {
	_, err := h.UpdateWith(ctx, Write{}, decide)
	return err
}

// Write says how [Held.UpdateWith] runs the write sequence for a part whose write needs
// more than [Held.Update]; its zero value is Update's.
type Write struct {
	// Before runs first in the transaction, before the log's head is read: it takes what
	// comes before the head in the lock order (a Connection's lease rows,
	// docs/architecture.md, "The lock order"), so that what it locked is fenced by the
	// catch-up that follows. It returns the log's head when it read one after what it
	// locked (a Connection's lease rows come with the head, [store.Tx.LockLeasesHead]),
	// which is then the write's head read under ReadHead, and 0 when it read none. Its
	// error fails the write and comes back as it returned it.
	Before func(ctx context.Context, tx store.Tx) (head int64, err error)
	// ReadHead reads the log's head rather than locking it, leaving the lock to the
	// first append: for a write that what Before locked serializes already (a hop call
	// under its lease row). Another writer may append between the head read and that
	// append, so decide may rely on nothing the lock Before took does not hold still.
	ReadHead bool
	// AtHead runs at the head read, before the State catches up to it: a check of what
	// the part keeps beside its State against that head (a Board's freshness,
	// [boards.Write.Fresh]). Its error fails the write and comes back as it returned it.
	AtHead func(ctx context.Context, tx store.Tx, head int64) error
	// KnownHead, when not zero, is a head of the log the caller read during the call
	// and caught the State up to ([WithHead]): the sequence reads no head, leaving the
	// log to the first append, and decide decides at that head (ReadHead is then
	// ignored). Only for a write whose events stay true whatever another writer
	// appends after that head (an acknowledgement that an outcome was delivered).
	KnownHead int64
}

// ErrNotApplied: the write committed, but the State's catch-up after the commit failed;
// the State's next catch-up applies what it missed. It comes wrapped, with the cause,
// from [Held.UpdateWith] and [Held.Update], which then return the head the commit left.
var ErrNotApplied = errors.New("eventlog: the write committed, but its State did not apply it (the next catch-up will)")

// Committed is what the caller of a write of project that ended with err is answered,
// for a part that answers from what its decision collected rather than from its State
// after the write: nil for a write whose commit landed though a State of this instance
// did not apply it after the commit ([ErrNotApplied]), which it warns of on log; err
// otherwise. An error there would have the caller act as if nothing was written (an
// Agent call again, a worker send a report again or not run a call it claimed); what the
// States missed, their next catch-up applies (docs/architecture.md, "The project state
// and its driver").
func Committed(ctx context.Context, log *slog.Logger, project contract.ProjectID, err error) error {
	if !errors.Is(err, ErrNotApplied) {
		return err
	}
	log.WarnContext(ctx, "committed, but this instance did not apply the commit; its next catch-up will", "project", string(project), "err", err)
	return nil
}

// UpdateWith is the write sequence of [Held.Update] as w says: in one store transaction
// it runs w.Before, reads the log's head once (locks it, unless w.ReadHead; reads none
// for w.KnownHead, or under w.ReadHead when Before read it, which stand for it), runs w.AtHead at it, catches the State up to it
// inside the transaction, runs decide on the State, which appends its events through
// tx, held back and appended in one call ([Collect]), commits, and catches the State up
// to the head the commit left, from memory when this process remembers the events
// ([Remember]). It returns that head, the
// last of the caller's own events (the head read, when decide appended none). When the
// transaction fails it returns 0 and the error; decide's, w.Before's and w.AtHead's
// own errors come back as they were returned, and decide appends nothing then. When
// the commit landed but the catch-up after it failed, it returns the head with an
// error wrapping [ErrNotApplied].
func (h *Held[S]) UpdateWith(ctx context.Context, w Write, decide func(tx store.Tx, s S) error) (int64, error) {
	var left int64
	err := h.p.log.store.Update(ctx, func(tx store.Tx) error {
		var before int64
		if w.Before != nil {
			var err error
			if before, err = w.Before(ctx, tx); err != nil {
				return err
			}
		}
		// The one head read: an instance that appends after it does so after what
		// Before locked, or after the head lock.
		var head store.Head
		var err error
		switch {
		case w.KnownHead != 0:
			head.Seq = w.KnownHead
		case w.ReadHead && before != 0:
			head.Seq = before
		case w.ReadHead:
			head, err = tx.Head(ctx, string(h.project))
		default:
			head, err = tx.LockHead(ctx, string(h.project))
		}
		if err != nil {
			return fmt.Errorf("read the head of %s: %w", h.project, err)
		}
		if w.AtHead != nil {
			if err := w.AtHead(ctx, tx, head.Seq); err != nil {
				return err
			}
		}
		s, err := h.CatchUpTo(ctx, tx, head.Seq)
		if err != nil {
			return err
		}
		c := &collectTx{Tx: tx, project: string(h.project)}
		if err := decide(c, s); err != nil {
			return err
		}
		if err := c.flush(ctx); err != nil {
			return err
		}
		left = head.Seq
		if c.wrote {
			// Read once everything is appended: the head the commit leaves, known
			// without a store call in a transaction of [Remember], which holds the log.
			left, err = HeadLeft(ctx, tx, h.project)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	if left > h.p.cursor.Seq() {
		if _, err := h.CatchUpTo(ctx, h.p.log.store, left); err != nil {
			return left, fmt.Errorf("%w: %w", ErrNotApplied, err)
		}
	}
	return left, nil
}

// ErrClosed: the Log was closed ([Driver.Close], [Log.Close]); nothing follows its logs
// any more.
var ErrClosed = errors.New("eventlog: the driver is closed")

// OnFollowError makes fn the Driver's notification that a project's follow goroutine
// ([Driver.Follow]) ended early while this part followed the project: a read of the log
// failed, or the Log was closed ([ErrClosed]). fn is called with the project and the
// error in the goroutine that holds the project's lock (so it may use what the part keeps
// beside the State under that lock, and must not take it), and [Held.FollowErr] returns
// the error from then until a Follow starts the goroutine again. A part wakes what waits
// on the log this way, so that each waiter reads the error rather than wait for good. Set
// it before d's first use, and only once.
func (d *Driver[S]) OnFollowError(fn func(project contract.ProjectID, err error)) {
	d.onFollowed = fn
}

// Follow keeps project's log caught up until stop is called: for a part that waits for
// the log to move, whoever appends to it (the calls held on an Operation), rather than
// poll the store itself. The followers of a project, of every part of d's [Log], share
// one goroutine of the Log's: the first Follow starts it, and the last stop ends it. It
// catches the States up and then waits on the store for the log to move past the
// project's cursor ([store.Store.Wait]), again and again, so each event applied is
// notified ([Driver.OnApply]) once to each part however many follow, and a part wakes its
// waiters from that notification. It reads no head of its own: it catches up to the last
// seq this process committed ([Latest]) or to the head its last wait returned, whichever
// is further; a log already past the cursor when it starts, or moved by another instance,
// is what the wait, which reads the head itself, finds at once (docs/architecture.md,
// "Catch-ups from memory"). A failed read ends the goroutine, and each part that follows
// the project hears of it ([Driver.OnFollowError], [Held.FollowErr]); the next Follow
// starts it again. Follow fails with [ErrClosed] once the Log was closed. stop may be
// called more than once; only the first call counts. Neither may be called under
// project's lock.
func (d *Driver[S]) Follow(project contract.ProjectID) (stop func(), err error) {
	l := d.log
	p := l.entry(project)
	p.fmu.Lock()
	defer p.fmu.Unlock()
	if l.life.Err() != nil {
		return nil, ErrClosed
	}
	if !p.following {
		l.followMu.Lock()
		defer l.followMu.Unlock()
		if l.closed {
			return nil, ErrClosed
		}
		p.following, p.followErr = true, nil
		p.followCtx, p.followStop = context.WithCancel(l.life)
		l.follows.Go(func() { l.follow(p) })
	}
	p.followers[d.index]++
	stopped := false
	return func() {
		p.fmu.Lock()
		defer p.fmu.Unlock()
		if stopped {
			return
		}
		stopped = true
		if p.followers[d.index]--; p.followers[d.index] == 0 {
			delete(p.followers, d.index)
		}
		if len(p.followers) == 0 {
			p.followStop()
		}
	}, nil
}

// FollowErr returns why project's last follow goroutine ended early ([Driver.Follow]),
// nil while one runs or when none ended so.
func (h *Held[S]) FollowErr() error {
	h.p.fmu.Lock()
	defer h.p.fmu.Unlock()
	return h.p.followErr
}

// Close closes the [Log] d joined ([Log.Close]): every part's follow goroutines end.
func (d *Driver[S]) Close() { d.log.Close() }

// Close ends every follow goroutine ([Driver.Follow]) of l's parts and waits for each:
// each part hears [ErrClosed] of each project it still followed ([Driver.OnFollowError]),
// and a Follow after Close fails with it. Reads and writes go on as before. It must not
// be called under a project's lock, and is safe to call more than once.
func (l *Log) Close() {
	l.followMu.Lock()
	l.closed = true
	l.followMu.Unlock()
	l.end()
	l.follows.Wait()
}

// follow is p's follow goroutine ([Driver.Follow]): it runs until no one follows p, or
// a read fails, or l is closed.
func (l *Log) follow(p *project) {
	var waited int64 // the head the last wait returned: committed, so safe to reach
	for {
		p.acquire()
		p.fmu.Lock()
		if len(p.followers) == 0 {
			p.following = false
			p.fmu.Unlock()
			p.release()
			return
		}
		if p.followCtx.Err() != nil && l.life.Err() == nil {
			// The last follower stopped and a new one came before the goroutine saw it.
			p.followCtx, p.followStop = context.WithCancel(l.life)
		}
		ctx := p.followCtx
		p.fmu.Unlock()
		if l.life.Err() != nil {
			p.followFailed(ErrClosed)
			p.release()
			return
		}
		// At or past that seq already, this reads nothing, unless the States must first
		// check that the log holds what they applied inside a transaction ([Cursor]).
		err := p.cursor.CatchUpTo(ctx, l.store, p.id, max(Latest(l.store, p.id), waited), p.applier(ctx, l.store))
		if err != nil {
			err = fmt.Errorf("catch up the log of %s: %w", p.id, err)
		}
		cursor := p.cursor.Seq()
		p.release()
		if err == nil {
			if waited, err = l.store.Wait(ctx, string(p.id), cursor); err != nil {
				err = fmt.Errorf("wait on the log of %s: %w", p.id, err)
			}
		}
		if ctx.Err() != nil {
			continue // the last follower stopped, or Close: the loop's top tells which
		}
		if err != nil {
			p.acquire()
			p.followFailed(err)
			p.release()
			return
		}
	}
}

// followFailed ends p's follow goroutine early with err and tells each part that
// follows p ([Driver.OnFollowError]). p must be locked.
func (p *project) followFailed(err error) {
	p.fmu.Lock()
	p.following, p.followErr = false, err
	var told []member
	ms := *p.members.Load()
	for i := range ms[:p.built] {
		if p.followers[i] > 0 {
			told = append(told, ms[i])
		}
	}
	p.fmu.Unlock()
	for _, m := range told {
		m.followFailed(err)
	}
}

// followFailed implements member: it tells the part ([Driver.OnFollowError]).
func (h *Held[S]) followFailed(err error) {
	if fn := h.drv.onFollowed; fn != nil {
		fn(h.project, err)
	}
}
