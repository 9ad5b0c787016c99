package eventlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/storecount"
)

// applied is the tests' State: every event it applied, in order.
type applied struct{ events []store.Event }

func (a *applied) Apply(e store.Event) error {
	a.events = append(a.events, e)
	return nil
}

func newApplied() *applied { return &applied{} }

// readState returns what project's State holds once caught up.
func readState(t *testing.T, d *eventlog.Driver[*applied]) []store.Event {
	t.Helper()
	var out []store.Event
	if err := d.Read(t.Context(), project, func(s *applied) error {
		out = slices.Clone(s.events)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDriver_Write checks the write sequence: decide sees the State caught up with the log
// (another instance's events included), its events commit, and the State applies them
// from memory without reading them back; a refused decide appends nothing and its error
// comes back as returned.
func TestDriver_Write(t *testing.T) {
	ctx := t.Context()
	st, _, mem, read := openLog(t)
	d := eventlog.NewDriver(mem, newApplied)
	appendN(t, st, 2) // another instance's
	var seen int
	if err := d.Write(ctx, project, func(tx store.Tx, s *applied) error {
		seen = len(s.events)
		return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: 1})
	}); err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Errorf("decide saw %d events, want the 2 another instance committed", seen)
	}
	h := d.Lock(project)
	seq := h.Seq()
	h.Unlock()
	if seq != 3 {
		t.Errorf("after its write the State is at %d, want 3 (its own event applied from memory)", seq)
	}

	errNo := errors.New("refused on purpose")
	read.Store(0)
	err := d.Write(ctx, project, func(tx store.Tx, s *applied) error {
		if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.refused"}); err != nil {
			return err
		}
		return errNo
	})
	if !errors.Is(err, errNo) {
		t.Fatalf("a refused decide returned %v, want its own error", err)
	}
	if got, want := readState(t, d), allEvents(t, st); !slices.EqualFunc(got, want, sameEvent) || len(want) != 3 {
		t.Errorf("after a refused decide the State holds %s and the log %s, want 3 events in both", seqs(got), seqs(want))
	}
	if n := read.Load(); n != 0 {
		t.Errorf("the refused write and the read after it read %d events from the store, want none", n)
	}
}

// TestDriver_TwoInstances checks that two drivers over one store (two serves) each hold
// the whole log, whichever wrote each event.
func TestDriver_TwoInstances(t *testing.T) {
	ctx := t.Context()
	st, _, _, _ := openLog(t)
	a := eventlog.NewDriver(eventlog.Remember(st, nil), newApplied)
	b := eventlog.NewDriver(eventlog.Remember(st, nil), newApplied)
	for i := range 6 {
		d := a
		if i%3 == 2 {
			d = b
		}
		if err := d.Write(ctx, project, func(tx store.Tx, s *applied) error {
			if len(s.events) != i {
				return fmt.Errorf("write %d saw %d events", i, len(s.events))
			}
			return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: i})
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := allEvents(t, st)
	for name, d := range map[string]*eventlog.Driver[*applied]{"a": a, "b": b} {
		if got := readState(t, d); !slices.EqualFunc(got, want, sameEvent) {
			t.Errorf("instance %s holds %s, want the log %s", name, seqs(got), seqs(want))
		}
	}
}

// TestDriver_FailedBatch writes through a Driver while other writers append at once, some
// of their transactions failing at COMMIT, so that the Driver's State applies, inside its
// own transactions, batch-mates' events that are then lost. Read afterwards, the State
// holds exactly the log: the cursor found it ahead and the Driver rebuilt it fresh.
func TestDriver_FailedBatch(t *testing.T) {
	for _, b := range failingBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			st := b.open(t)
			mem := eventlog.Remember(st, nil)
			d := eventlog.NewDriver(mem, newApplied)
			const writers, each = 4, 40
			var wg sync.WaitGroup
			errs := make(chan error, writers+1)
			for w := range writers {
				wg.Go(func() { appendLossily(ctx, mem, w, each, errs) })
			}
			wg.Go(func() {
				for i := range each {
					err := d.Write(ctx, project, func(tx store.Tx, _ *applied) error {
						return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.part", N: i})
					})
					if errors.Is(err, eventlog.ErrDiverged) {
						errs <- fmt.Errorf("the Driver's write: %w", err)
						return
					}
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if got, want := readState(t, d), allEvents(t, st); !slices.EqualFunc(got, want, sameEvent) {
				t.Fatalf("the State holds %s, want the log %s", seqs(got), seqs(want))
			}
		})
	}
}

// orderStore notes, in order, each head its transactions read or lock, so that a test
// sees where a write's own steps ran among them.
type orderStore struct {
	store.Store
	steps *[]string
}

func (o orderStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return o.Store.Update(ctx, func(tx store.Tx) error { return fn(orderTx{Tx: tx, steps: o.steps}) })
}

type orderTx struct {
	store.Tx
	steps *[]string
}

func (o orderTx) Head(ctx context.Context, project string) (store.Head, error) {
	*o.steps = append(*o.steps, "read head")
	return o.Tx.Head(ctx, project)
}

func (o orderTx) LockHead(ctx context.Context, project string) (store.Head, error) {
	*o.steps = append(*o.steps, "lock head")
	return o.Tx.LockHead(ctx, project)
}

// TestHeld_UpdateWith checks each option of the write sequence: Before runs first in the
// transaction, ahead of the one head read (a read or a lock, as ReadHead says; under
// ReadHead, Before's own read of the head after its locks stands for it); AtHead
// runs at that head, before the State catches up, and its refusal, like Before's, comes
// back as returned with nothing appended and decide not run; the head UpdateWith hands
// back is the log's head after the commit, which the State has applied.
func TestHeld_UpdateWith(t *testing.T) {
	errNo := errors.New("refused on purpose")
	tests := []struct {
		name       string
		readHead   bool
		beforeHead bool  // Before reads the head and returns it
		before     error // Before's answer
		atHead     error // AtHead's answer
		append     int   // events decide appends
		wantSteps  []string
		wantErr    error
		wantLeft   int64 // the head handed back; the log holds 2 events before the write
		wantLogLen int
	}{
		{"zero Write: lock the head", false, false, nil, nil, 2, []string{"before", "lock head", "at head 2", "decide at 2"}, nil, 4, 4},
		{"read the head after Before", true, false, nil, nil, 3, []string{"before", "read head", "at head 2", "decide at 2"}, nil, 5, 5},
		{"Before's head read stands for it", true, true, nil, nil, 1, []string{"before", "read head", "at head 2", "decide at 2"}, nil, 3, 3},
		{"read the head, append nothing", true, false, nil, nil, 0, []string{"before", "read head", "at head 2", "decide at 2"}, nil, 2, 2},
		{"Before refuses", false, false, errNo, nil, 1, []string{"before"}, errNo, 0, 2},
		{"AtHead refuses", true, false, nil, errNo, 1, []string{"before", "read head", "at head 2"}, errNo, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			st, counted, _, _ := openLog(t)
			var steps []string
			mem := eventlog.Remember(orderStore{Store: counted, steps: &steps}, nil)
			d := eventlog.NewDriver(mem, newApplied)
			appendN(t, st, 2) // another instance's
			var blob store.Hash
			w := eventlog.Write{
				ReadHead: tt.readHead,
				Before: func(ctx context.Context, tx store.Tx) (int64, error) {
					steps = append(steps, "before")
					// A step of the transaction: what it writes commits with the rest.
					var err error
					if blob, err = tx.PutBlob(ctx, []byte("written by Before in "+tt.name)); err != nil {
						return 0, err
					}
					if !tt.beforeHead {
						return 0, tt.before
					}
					h, err := tx.Head(ctx, string(project))
					if err != nil {
						return 0, err
					}
					return h.Seq, tt.before
				},
				AtHead: func(_ context.Context, _ store.Tx, head int64) error {
					steps = append(steps, fmt.Sprintf("at head %d", head))
					return tt.atHead
				},
			}
			h := d.Lock(project)
			atStart := h.Seq()
			left, err := h.UpdateWith(ctx, w, func(tx store.Tx, s *applied) error {
				steps = append(steps, fmt.Sprintf("decide at %d", len(s.events)))
				for i := range tt.append {
					if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: i}); err != nil {
						return err
					}
				}
				return nil
			})
			seq := h.Seq()
			h.Unlock()
			if !errors.Is(err, tt.wantErr) || (tt.wantErr != nil && err != tt.wantErr) {
				t.Fatalf("UpdateWith = %v, want %v as returned", err, tt.wantErr)
			}
			// One head read or lock, and no other: the head the commit leaves is known
			// without asking the store (the transaction holds the log).
			if !slices.Equal(steps, tt.wantSteps) {
				t.Errorf("steps %q, want %q", steps, tt.wantSteps)
			}
			log := allEvents(t, st)
			if len(log) != tt.wantLogLen {
				t.Fatalf("the log holds %s, want %d events", seqs(log), tt.wantLogLen)
			}
			if left != tt.wantLeft {
				t.Errorf("UpdateWith handed back head %d, want %d", left, tt.wantLeft)
			}
			_, err = st.Blob(ctx, blob)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			if committed := err == nil; committed != (tt.wantErr == nil) {
				t.Errorf("Before's write committed: %v, want %v", committed, tt.wantErr == nil)
			}
			if tt.wantErr != nil {
				if seq > 2 || seq < atStart {
					t.Errorf("after a refused write the State is at %d, want at most the 2 events committed", seq)
				}
				return
			}
			if seq != left {
				t.Errorf("after the commit the State is at %d, want the head handed back, %d", seq, left)
			}
			if got := readState(t, d); !slices.EqualFunc(got, log, sameEvent) {
				t.Errorf("the State holds %s, want the log %s", seqs(got), seqs(log))
			}
		})
	}
}

// TestCollect_Nested checks that a Collect inside a Collect of the same log holds its
// events with the outer ones and appends them in the outer call (one AppendAll in all),
// in order, and that a nested Collect that fails drops only what it held.
func TestCollect_Nested(t *testing.T) {
	ctx := t.Context()
	st, _, _, _ := openLog(t)
	calls := new(int)
	cs := appendCounting{Store: st, calls: calls}
	errNo := errors.New("refused on purpose")
	add := func(tx store.Tx, n int) error {
		return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: n})
	}
	if err := cs.Update(ctx, func(tx store.Tx) error {
		return eventlog.Collect(ctx, tx, project, func(tx store.Tx) error {
			if err := add(tx, 1); err != nil {
				return err
			}
			if err := eventlog.Collect(ctx, tx, project, func(tx store.Tx) error { return add(tx, 2) }); err != nil {
				return err
			}
			// A nested Collect that fails: its event is dropped, the others kept.
			if err := eventlog.Collect(ctx, tx, project, func(tx store.Tx) error {
				if err := add(tx, 99); err != nil {
					return err
				}
				return errNo
			}); !errors.Is(err, errNo) {
				return fmt.Errorf("the failing nested Collect returned %v", err)
			}
			return add(tx, 3)
		})
	}); err != nil {
		t.Fatal(err)
	}
	if *calls != 1 {
		t.Errorf("the nested Collects appended in %d store calls, want 1", *calls)
	}
	var got []int
	for _, e := range allEvents(t, st) {
		var d struct{ N int }
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d.N)
	}
	if want := []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("the log holds events %v, want %v", got, want)
	}
}

// appendCounting counts the append calls of its transactions.
type appendCounting struct {
	store.Store
	calls *int
}

func (a appendCounting) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return a.Store.Update(ctx, func(tx store.Tx) error { return fn(appendCountingTx{Tx: tx, calls: a.calls}) })
}

type appendCountingTx struct {
	store.Tx
	calls *int
}

func (a appendCountingTx) Append(ctx context.Context, e store.NewEvent) (store.Event, error) {
	*a.calls++
	return a.Tx.Append(ctx, e)
}

func (a appendCountingTx) AppendAll(ctx context.Context, es []store.NewEvent) ([]store.Event, error) {
	*a.calls++
	return a.Tx.AppendAll(ctx, es)
}

// notified is what a Driver's applied notification saw: each event with the State it
// was applied to.
type notified struct {
	state *applied
	e     store.Event
}

// TestDriver_OnApply checks the applied notification: it sees each event a State applies
// exactly once, with that State, in order, whether applied from the store, inside a
// write's transaction or from memory after its commit; across the rebuild that follows
// a failed COMMIT, whose event the State applied inside the transaction, it sees the
// log applied again from its start, to the new State, and never the lost event twice.
func TestDriver_OnApply(t *testing.T) {
	for _, b := range failingBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			st := b.open(t)
			mem := eventlog.Remember(st, nil)
			var states []*applied // every State the Driver made, in order
			d := eventlog.NewDriver(mem, func() *applied {
				s := newApplied()
				states = append(states, s)
				return s
			})
			var seen []notified
			d.OnApply(func(p contract.ProjectID, s *applied, e store.Event) {
				if p != project {
					t.Errorf("notified of project %s, want %s", p, project)
				}
				seen = append(seen, notified{s, e})
			})
			appendN(t, st, 2) // another instance's: applied from the store
			write := func(typ string) error {
				return d.Write(ctx, project, func(tx store.Tx, _ *applied) error {
					return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: typ})
				})
			}
			if err := write("test.event"); err != nil { // applied from memory
				t.Fatal(err)
			}
			// A write whose COMMIT fails, after the State applied, inside its
			// transaction, an event the log then lacks.
			h := d.Lock(project)
			err := mem.Update(ctx, func(tx store.Tx) error {
				if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: lostType}); err != nil {
					return err
				}
				_, err := h.CatchUp(ctx, tx)
				return err
			})
			h.Unlock()
			if err == nil {
				t.Fatal("an Update whose COMMIT fails returned nil")
			}
			if err := write("test.event"); err != nil { // rebuilds, then writes
				t.Fatal(err)
			}
			log := readState(t, d)
			if want := allEvents(t, st); !slices.EqualFunc(log, want, sameEvent) || len(want) != 4 {
				t.Fatalf("the State holds %s, want the log %s of 4 events", seqs(log), seqs(want))
			}
			if len(states) != 2 {
				t.Fatalf("the Driver made %d States, want 2 (one rebuild)", len(states))
			}
			// Every application, State by State, in order, once each.
			var want []notified
			for _, s := range states {
				for _, e := range s.events {
					want = append(want, notified{s, e})
				}
			}
			if !slices.EqualFunc(seen, want, func(a, b notified) bool { return a.state == b.state && sameEvent(a.e, b.e) }) {
				t.Errorf("notified %d applications, want the %d the States made, in order", len(seen), len(want))
			}
			lost := 0
			for _, n := range seen {
				if n.e.Type == lostType {
					lost++
				}
			}
			if lost != 1 || states[0].events[len(states[0].events)-1].Type != lostType {
				t.Errorf("the lost event was notified %d times, want once, by the State that was then rebuilt", lost)
			}
		})
	}
}

// TestDriver_LockWithin: a call made inside another writer's transaction waits for a held
// State at most its bound, takes it once freed within the bound, gives up when its
// context ends, and takes a free State at once; an Unlock of a State not held panics
// rather than block.
func TestDriver_LockWithin(t *testing.T) {
	d := eventlog.NewDriver(nil, newApplied)
	held := d.Lock(project)
	if _, ok := d.LockWithin(t.Context(), project, time.Millisecond); ok {
		t.Fatal("LockWithin took a State another call holds")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := d.LockWithin(ctx, project, time.Hour); ok {
		t.Fatal("LockWithin took a held State under an ended context")
	}
	go func() {
		time.Sleep(5 * time.Millisecond)
		held.Unlock()
	}()
	h, ok := d.LockWithin(t.Context(), project, time.Minute)
	if !ok {
		t.Fatal("LockWithin gave up on a State freed within its bound")
	}
	h.Unlock()
	if h, ok = d.LockWithin(t.Context(), project, 0); !ok {
		t.Fatal("LockWithin gave up on a free State")
	}
	h.Unlock()
	defer func() {
		if recover() == nil {
			t.Error("Unlock of a State not held did not panic")
		}
	}()
	h.Unlock()
}

// TestHeld_UpdateWithKnownHead checks the write sequence at a head the caller read
// ([eventlog.Write.KnownHead]): it reads no head in its transaction, decide decides at
// that head even when another instance appended after it, and after the commit the
// State holds the whole log, its own event applied from memory.
func TestHeld_UpdateWithKnownHead(t *testing.T) {
	ctx := t.Context()
	st, counted, _, _ := openLog(t)
	var steps []string
	mem := eventlog.Remember(orderStore{Store: counted, steps: &steps}, nil)
	d := eventlog.NewDriver(mem, newApplied)
	appendN(t, st, 1)
	h := d.Lock(project)
	defer h.Unlock()
	if _, err := h.CatchUp(ctx, mem); err != nil { // the caller's read, at head 1
		t.Fatal(err)
	}
	appendN(t, st, 1) // another instance's, after the head the caller read
	steps = nil
	w := eventlog.Write{KnownHead: h.Seq(), AtHead: func(_ context.Context, _ store.Tx, head int64) error {
		steps = append(steps, fmt.Sprintf("at head %d", head))
		return nil
	}}
	left, err := h.UpdateWith(ctx, w, func(tx store.Tx, s *applied) error {
		steps = append(steps, fmt.Sprintf("decide at %d", len(s.events)))
		return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: 2})
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"at head 1", "decide at 1"}; !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q (no head read or locked)", steps, want)
	}
	log := allEvents(t, st)
	if left != 3 || len(log) != 3 {
		t.Fatalf("UpdateWith handed back head %d, the log holds %s; want 3 and 3 events", left, seqs(log))
	}
	if got := h.State().events; !slices.EqualFunc(got, log, sameEvent) {
		t.Errorf("the State holds %s, want the log %s", seqs(got), seqs(log))
	}
}

// TestDriver_Snapshot checks the Driver's snapshots ([eventlog.Driver.Publish]): one is
// published when the lock is released with the State moved, and read without the lock,
// so a write holding the State across its transaction does not hold up a read, which
// sees the log as committed before that write; a State that applied, inside a
// transaction, an event its failed COMMIT lost publishes nothing, so no snapshot ever
// holds an event the log lacks; and a snapshot handed out is never changed.
func TestDriver_Snapshot(t *testing.T) {
	for _, b := range failingBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			st := b.open(t)
			mem := eventlog.Remember(st, nil)
			d := eventlog.NewDriver(mem, newApplied)
			d.Publish(func(s *applied) any { return slices.Clone(s.events) })
			// snapshot reads the last snapshot from another goroutine, failing when it
			// waits (for a lock the caller holds).
			snapshot := func() (int64, []store.Event) {
				t.Helper()
				got := make(chan eventlog.Snapshot, 1)
				go func() {
					s, _ := d.Snapshot(project)
					got <- s
				}()
				select {
				case s := <-got:
					es, _ := s.Value.([]store.Event)
					return s.Seq, es
				case <-time.After(5 * time.Second):
					t.Fatal("Snapshot waited for the project's lock")
					return 0, nil
				}
			}
			if _, ok := d.Snapshot(project); ok {
				t.Fatal("a snapshot before the State was ever caught up")
			}
			appendN(t, st, 2) // another instance's
			readState(t, d)
			if seq, es := snapshot(); seq != 2 || !slices.EqualFunc(es, allEvents(t, st), sameEvent) {
				t.Fatalf("after a read the snapshot is at %d holding %s, want the log's 2 events", seq, seqs(es))
			}

			// A write that holds the State across its transaction: the snapshot stays the
			// committed log before it, and moves once the lock is released.
			h := d.Lock(project)
			var during int64
			if err := h.Update(ctx, func(tx store.Tx, _ *applied) error {
				if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: 9}); err != nil {
					return err
				}
				during, _ = snapshot()
				return nil
			}); err != nil {
				h.Unlock()
				t.Fatal(err)
			}
			if seq, _ := snapshot(); seq != 2 {
				t.Errorf("with the write committed and the lock held the snapshot is at %d, want 2 until the lock is released", seq)
			}
			h.Unlock()
			if during != 2 {
				t.Errorf("inside the write's transaction the snapshot is at %d, want 2", during)
			}
			kept, keptEvents := snapshot()
			if kept != 3 || !slices.EqualFunc(keptEvents, allEvents(t, st), sameEvent) {
				t.Fatalf("after the write the snapshot is at %d holding %s, want the log's 3 events", kept, seqs(keptEvents))
			}

			// A COMMIT that fails after the State applied, inside the transaction, the
			// event it loses: no snapshot holds it.
			// Committed says so too, for a part that hands out what it derives by its own
			// means (the Board's published Views).
			h = d.Lock(project)
			before := h.Committed()
			err := mem.Update(ctx, func(tx store.Tx) error {
				if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: lostType}); err != nil {
					return err
				}
				_, err := h.CatchUp(ctx, tx)
				return err
			})
			after := h.Committed()
			h.Unlock()
			if err == nil {
				t.Fatal("an Update whose COMMIT fails returned nil")
			}
			if !before || after {
				t.Errorf("Committed() = %v before and %v after a catch-up inside a transaction whose COMMIT failed, want true then false", before, after)
			}
			if seq, es := snapshot(); seq != 3 || slices.ContainsFunc(es, func(e store.Event) bool { return e.Type == lostType }) {
				t.Fatalf("after a failed COMMIT the snapshot is at %d holding %s, want the 3 events committed", seq, seqs(es))
			}
			if err := d.Write(ctx, project, func(tx store.Tx, _ *applied) error { // rebuilds, then writes
				return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: 10})
			}); err != nil {
				t.Fatal(err)
			}
			if seq, es := snapshot(); seq != 4 || !slices.EqualFunc(es, allEvents(t, st), sameEvent) {
				t.Errorf("after the rebuild and a write the snapshot is at %d holding %s, want the log's 4 events", seq, seqs(es))
			}
			h = d.Lock(project)
			if !h.Committed() {
				t.Error("Committed() = false after the rebuild and a committed write, want true")
			}
			h.Unlock()
			if len(keptEvents) != 3 {
				t.Errorf("a snapshot handed out changed: it holds %d events, want the 3 it was published with", len(keptEvents))
			}
		})
	}
}

// followed is a Driver whose applied notification ([eventlog.Driver.OnApply]) hands each
// event to the test, and whose follow errors ([eventlog.Driver.OnFollowError]) too.
func followed(t *testing.T, st store.Store) (d *eventlog.Driver[*applied], applies <-chan store.Event, failed <-chan error) {
	t.Helper()
	a, f := make(chan store.Event, 64), make(chan error, 4)
	d = eventlog.NewDriver(st, newApplied)
	d.OnApply(func(_ contract.ProjectID, _ *applied, e store.Event) { a <- e })
	d.OnFollowError(func(_ contract.ProjectID, err error) { f <- err })
	t.Cleanup(d.Close)
	return d, a, f
}

// follow is d.Follow(project), which must succeed.
func follow(t *testing.T, d *eventlog.Driver[*applied]) func() {
	t.Helper()
	stop, err := d.Follow(project)
	if err != nil {
		t.Fatalf("Follow: %v", err)
	}
	return stop
}

// nextApplied waits for the next event the State applies and checks its seq.
func nextApplied(t *testing.T, applies <-chan store.Event, seq int64) {
	t.Helper()
	if e := <-applies; e.Seq != seq {
		t.Fatalf("the State applied event %d, want %d", e.Seq, seq)
	}
}

// TestDriver_FollowAnotherInstance checks that a followed log is kept caught up with
// what another instance (a second Driver over the same store) appends, with no call of
// the follower's: its goroutine waits on the store and reads no head of its own
// (docs/architecture.md, "Catch-ups from memory"), only the events it lacks.
func TestDriver_FollowAnotherInstance(t *testing.T) {
	ctx := t.Context()
	st, _, _, _ := openLog(t)
	counted := storecount.Wrap(st)
	a, applies, _ := followed(t, eventlog.Remember(counted, nil))
	b := eventlog.NewDriver(eventlog.Remember(st, nil), newApplied)
	stop := follow(t, a)
	defer stop()
	for i := range 3 {
		if err := b.Write(ctx, project, func(tx store.Tx, _ *applied) error {
			return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: i})
		}); err != nil {
			t.Fatal(err)
		}
		nextApplied(t, applies, int64(i+1))
	}
	c := counted.Counts()
	if c.HeadReads != 0 {
		t.Errorf("following read the head %d times (%v), want none: the wait reads it", c.HeadReads, c.HeadsFrom)
	}
	if c.ByMethod["Wait"] == 0 {
		t.Errorf("following made no Wait on the store (%v)", c.ByMethod)
	}
}

// TestDriver_FollowStops checks that the followers of a project share its goroutine: it
// runs until the last of them stops, a stop called twice counts once, the last stop ends
// it, and a Follow after that starts it again.
func TestDriver_FollowStops(t *testing.T) {
	st, _, mem, _ := openLog(t)
	d, applies, _ := followed(t, mem)
	stop1, stop2 := follow(t, d), follow(t, d)
	appendN(t, st, 1) // another instance's
	nextApplied(t, applies, 1)
	stop1()
	stop1()
	appendN(t, st, 1)
	nextApplied(t, applies, 2) // still followed: stop2 is not called
	stop2()
	// Returns once the goroutine ended: without the last stop ending it, this waits
	// for good.
	eventlog.WaitFollows(d)
	stop3 := follow(t, d)
	defer stop3()
	appendN(t, st, 1)
	nextApplied(t, applies, 3)
}

// TestDriver_FollowClose checks that Close ends every follow goroutine and waits for
// each: the part hears ErrClosed, under the project's lock, before Close returns; a
// Follow after Close fails with ErrClosed, and reads go on.
func TestDriver_FollowClose(t *testing.T) {
	st, _, mem, _ := openLog(t)
	d := eventlog.NewDriver(mem, newApplied)
	heard, release := make(chan error, 1), make(chan struct{})
	d.OnFollowError(func(_ contract.ProjectID, err error) {
		heard <- err
		<-release
	})
	stop := follow(t, d)
	defer stop()
	closed := make(chan struct{})
	go func() {
		d.Close()
		close(closed)
	}()
	if err := <-heard; !errors.Is(err, eventlog.ErrClosed) {
		t.Errorf("the part heard %v at Close, want ErrClosed", err)
	}
	select {
	case <-closed:
		t.Error("Close returned while a follow goroutine still ran")
	default:
	}
	close(release)
	<-closed
	if _, err := d.Follow(project); !errors.Is(err, eventlog.ErrClosed) {
		t.Errorf("Follow after Close = %v, want ErrClosed", err)
	}
	d.Close() // twice is harmless
	appendN(t, st, 1)
	if got := readState(t, d); len(got) != 1 {
		t.Errorf("a read after Close holds %s, want the log's one event", seqs(got))
	}
}

// failWait is a store whose next Wait fails when fail is set.
type failWait struct {
	store.Store
	fail *atomic.Bool
}

func (f failWait) Wait(ctx context.Context, project string, after int64) (int64, error) {
	if f.fail.Swap(false) {
		return 0, errFail
	}
	return f.Store.Wait(ctx, project, after)
}

// TestDriver_FollowError checks that a failed read ends the project's follow goroutine
// and reaches the part: its notification is called under the project's lock, and
// Held.FollowErr returns the error until a Follow starts the goroutine again.
func TestDriver_FollowError(t *testing.T) {
	st, _, _, _ := openLog(t)
	fail := new(atomic.Bool)
	fail.Store(true)
	d := eventlog.NewDriver(eventlog.Remember(failWait{Store: st, fail: fail}, nil), newApplied)
	t.Cleanup(d.Close)
	heard := make(chan error, 1)
	d.OnFollowError(func(_ contract.ProjectID, err error) {
		if h, ok := d.LockWithin(t.Context(), project, 0); ok {
			h.Unlock()
			t.Error("the part heard of the error without the project's lock held")
		}
		heard <- err
	})
	stop := follow(t, d)
	defer stop()
	if err := <-heard; !errors.Is(err, errFail) {
		t.Fatalf("the part heard %v, want the failed wait's error", err)
	}
	h := d.Lock(project)
	err := h.FollowErr()
	h.Unlock()
	if !errors.Is(err, errFail) {
		t.Errorf("FollowErr = %v after the failed wait, want its error", err)
	}
	stop2 := follow(t, d)
	defer stop2()
	h = d.Lock(project)
	err = h.FollowErr()
	h.Unlock()
	if err != nil {
		t.Errorf("FollowErr = %v once a Follow started the goroutine again, want nil", err)
	}
}

func TestCommitted(t *testing.T) {
	other := errors.New("the transaction failed")
	notApplied := fmt.Errorf("%w: %w", eventlog.ErrNotApplied, errors.New("a State refused an event"))
	for _, tc := range []struct {
		name string
		err  error
		want error
		warn bool
	}{
		{"committed", nil, nil, false},
		{"committed, not applied here", notApplied, nil, true},
		{"not committed", other, other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged strings.Builder
			log := slog.New(slog.NewTextHandler(&logged, nil))
			if got := eventlog.Committed(t.Context(), log, "p", tc.err); got != tc.want {
				t.Errorf("Committed = %v, want %v", got, tc.want)
			}
			if warned := strings.Contains(logged.String(), "level=WARN"); warned != tc.warn {
				t.Errorf("warned %v, want %v: %q", warned, tc.warn, logged.String())
			}
		})
	}
}
