package eventlog

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Every part of the authority keeps a projection of a project's log and catches it up
// before use. Reading the events back from the store is most of what a catch-up costs,
// and most of the events a busy process reads back are the ones it has just committed
// itself. So the authority's store remembers them: [Remember] wraps the store, and every
// Update that commits hands the events it appended to its project's tail, in memory. A
// catch-up then reads only the log's head (no events, when the head has not moved) and
// applies from the tail the events that continue its cursor; it reads from the store
// only what the tail lacks: another instance's events, or events whose committing
// Update has not yet returned. An event in the tail was committed at its sequence number,
// so applying it is what reading it would be: several docket serve over one database
// still agree.

// tailSize is how many of a project's latest committed events a tail keeps: enough for
// the slowest projection of a busy project (the Board's cursor moves only on a Board
// write) to catch up from memory.
const tailSize = 1024

// Remember returns st with a memory of the events committed through it: each project's
// latest [tailSize] events, read back by [Cursor.CatchUp] instead of the store. Every part
// of one authority must share the store it returns. A projection rebuilt because its
// cursor found it off its log ([Cursor]) is said on log, at WARN, with what the cursor
// found (events applied inside a transaction that the log lacks, as a failed COMMIT
// leaves them; a projection its part made at a seq, [Cursor.Start], that the log's next
// event does not link to; or a log changed under a committed event), and counted
// ([Rebuilds]): it heals itself, but a person should know it happened. A nil log says
// nothing.
func Remember(st store.Store, log *slog.Logger) store.Store {
	if _, ok := st.(*memStore); ok {
		return st
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &memStore{Store: st, tails: map[string]*tail{}, log: log}
}

// memStore is a store.Store that hands each commit's events to their projects' tails.
type memStore struct {
	store.Store
	mu       sync.Mutex       // guards tails; held only to find or create an entry
	tails    map[string]*tail // by project; created on a project's first commit here
	log      *slog.Logger
	rebuilds atomic.Int64 // projections rebuilt from the log since the store was made
}

// rebuilt notes that a projection of project's log was found off it at seq, as how
// says, and rebuilt from the log's start.
func (m *memStore) rebuilt(project contract.ProjectID, how divergence, seq int64) {
	n := m.rebuilds.Add(1)
	m.log.Warn(how.warning(), "project", string(project), "seq", seq, "rebuilds", n)
}

// Rebuilds returns how many projections were rebuilt from the log through r's store
// because their cursors found them off the log, whatever the cause (see [Remember]); 0
// when r is not a store from Remember or a transaction of one.
func Rebuilds(r store.Reader) int64 {
	if m := tails(r); m != nil {
		return m.rebuilds.Load()
	}
	return 0
}

// tail is one project's latest committed events, each in the slot of its sequence
// number modulo tailSize; a slot holding another sequence number holds nothing asked.
type tail struct {
	mu     sync.Mutex
	evs    [tailSize]store.Event
	latest int64 // the highest seq kept
}

// Update implements [store.Store.Update]: fn sees a Tx that notes what it appends, and
// once the commit returned, the events go to the tails.
func (m *memStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	var evs []store.Event
	err := m.Store.Update(ctx, func(tx store.Tx) error {
		evs = evs[:0] // the store never runs fn twice, but a second run would append again
		return fn(&memTx{Tx: tx, mem: m, evs: &evs})
	})
	if err == nil {
		m.keep(evs)
	}
	return err
}

// keep puts committed events into their projects' tails.
func (m *memStore) keep(evs []store.Event) {
	for len(evs) > 0 {
		t := m.tail(evs[0].Project, true)
		n := 1
		for n < len(evs) && evs[n].Project == evs[0].Project {
			n++
		}
		t.mu.Lock()
		for _, e := range evs[:n] {
			t.evs[e.Seq%tailSize] = e
			t.latest = max(t.latest, e.Seq)
		}
		t.mu.Unlock()
		evs = evs[n:]
	}
}

// tail returns project's tail; nil when none exists and create is false.
func (m *memStore) tail(project string, create bool) *tail {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tails[project]
	if t == nil && create {
		t = &tail{}
		m.tails[project] = t
	}
	return t
}

// memTx is a store.Tx that notes the events appended in it, and the heads it holds.
type memTx struct {
	store.Tx
	mem *memStore
	evs *[]store.Event
	// held is the head of each log this transaction holds: locked ([store.Tx.LockHead])
	// or appended to. No other writer appends to a held log until the commit (the
	// store's contract), so its head is the one locked or the transaction's own last
	// append, and reading it again asks the store nothing.
	held []heldHead
}

// heldHead is the head of one log a transaction holds.
type heldHead struct {
	project string
	head    store.Head
}

// Append implements [store.Tx.Append]. The log is held from its first append on.
func (t *memTx) Append(ctx context.Context, e store.NewEvent) (store.Event, error) {
	ev, err := t.Tx.Append(ctx, e)
	if err == nil {
		*t.evs = append(*t.evs, ev)
		t.hold(ev.Project, store.Head{Seq: ev.Seq, Hash: ev.Hash})
	}
	return ev, err
}

// AppendAll implements [store.Tx.AppendAll], noting the events as Append does.
func (t *memTx) AppendAll(ctx context.Context, es []store.NewEvent) ([]store.Event, error) {
	evs, err := t.Tx.AppendAll(ctx, es)
	if err == nil && len(evs) > 0 {
		*t.evs = append(*t.evs, evs...)
		last := evs[len(evs)-1]
		t.hold(last.Project, store.Head{Seq: last.Seq, Hash: last.Hash})
	}
	return evs, err
}

// LockHead implements [store.Tx.LockHead]: a log the transaction holds already is not
// locked again.
func (t *memTx) LockHead(ctx context.Context, project string) (store.Head, error) {
	if h, ok := t.heldHead(project); ok {
		return h, nil
	}
	h, err := t.Tx.LockHead(ctx, project)
	if err == nil {
		t.hold(project, h)
	}
	return h, err
}

// Head implements [store.Reader.Head]: a held log's head is known. An unheld log's head
// is read, and not kept: another writer may append to it before the commit.
func (t *memTx) Head(ctx context.Context, project string) (store.Head, error) {
	if h, ok := t.heldHead(project); ok {
		return h, nil
	}
	return t.Tx.Head(ctx, project)
}

func (t *memTx) heldHead(project string) (store.Head, bool) {
	for _, h := range t.held {
		if h.project == project {
			return h.head, true
		}
	}
	return store.Head{}, false
}

func (t *memTx) hold(project string, h store.Head) {
	for i := range t.held {
		if t.held[i].project == project {
			t.held[i].head = h
			return
		}
	}
	t.held = append(t.held, heldHead{project: project, head: h})
}

// Recent returns the events of project's log from seq from (exclusive) up to seq to
// (inclusive) that this process committed through r's store and still remembers, as far
// as they follow from without a gap: none when r is not a store from [Remember] or a
// transaction of one. The caller reads the rest from r.
func Recent(r store.Reader, project contract.ProjectID, from, to int64) []store.Event {
	m := tails(r)
	if m == nil {
		return nil
	}
	return m.recent(nil, string(project), from, to)
}

// appendRecent is [Recent] appending to dst, for a caller that reuses one buffer: a
// catch-up runs on each write and each wake of a held call, and copying the events
// (≈ 200 bytes each) into a new slice each time was a steady share of the authority's
// allocations per governed action (benchmarks/README.md).
func appendRecent(dst []store.Event, r store.Reader, project contract.ProjectID, from, to int64) []store.Event {
	m := tails(r)
	if m == nil {
		return dst
	}
	return m.recent(dst, string(project), from, to)
}

// Latest returns the highest seq of project's log that this process committed through
// r's store, 0 when none or when r is not a store from [Remember]. The log may be past it
// (another instance's events): a caller woken by a commit may catch up to it with
// [Cursor.CatchUpTo] without reading the head, and must read the head
// ([Cursor.CatchUp]) when its cursor is there already.
func Latest(r store.Reader, project contract.ProjectID) int64 {
	m := tails(r)
	if m == nil {
		return 0
	}
	t := m.tail(string(project), false)
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latest
}

// tails returns the memory of committed events behind r, or nil when r is not a store
// from [Remember] or a transaction of one.
func tails(r store.Reader) *memStore {
	switch r := r.(type) {
	case *memStore:
		return r
	case *memTx:
		return r.mem
	case *collectTx:
		return tails(r.Tx)
	}
	return nil
}

// recent appends to evs the events of project's tail from seq from (exclusive) up to seq
// to (inclusive), as far as the tail holds them without a gap, and returns it.
func (m *memStore) recent(evs []store.Event, project string, from, to int64) []store.Event {
	if to <= from {
		return evs
	}
	t := m.tail(project, false)
	if t == nil {
		return evs
	}
	if to-from > tailSize {
		to = from + tailSize
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := from + 1; s <= to; s++ {
		e := t.evs[s%tailSize]
		if e.Seq != s {
			break
		}
		if cap(evs) == len(evs) {
			// Sized once for the range (at most tailSize): grown one by one, every
			// catch-up copied its events through each size.
			evs = slices.Grow(evs, int(to-s+1))
		}
		evs = append(evs, e)
	}
	return evs
}
