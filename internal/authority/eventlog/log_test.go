package eventlog_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// tally is a second toy State, of another type than applied: the seqs it applied.
type tally struct{ seqs []int64 }

func (t *tally) Apply(e store.Event) error {
	t.seqs = append(t.seqs, e.Seq)
	return nil
}

// lastType is a third: the type of the last event it applied.
type lastType struct{ typ string }

func (l *lastType) Apply(e store.Event) error {
	l.typ = e.Type
	return nil
}

// joined is a Log of three parts of different State types over one store, each part's
// fresh States and applied notifications counted, every notification also noted in one
// list, in the order made ("A1" is part A notified of event 1).
type joined struct {
	log     *eventlog.Log
	a       *eventlog.Driver[*applied]
	b       *eventlog.Driver[*tally]
	c       *eventlog.Driver[*lastType]
	fresh   [3]atomic.Int64
	mu      sync.Mutex
	notes   []string
	applies chan string // every note, for a test that waits for one
}

func newJoined(t *testing.T, st store.Store) *joined {
	t.Helper()
	j := &joined{log: eventlog.NewLog(st), applies: make(chan string, 256)}
	j.a = eventlog.Join(j.log, func() *applied { j.fresh[0].Add(1); return &applied{} })
	j.b = eventlog.Join(j.log, func() *tally { j.fresh[1].Add(1); return &tally{} })
	j.c = eventlog.Join(j.log, func() *lastType { j.fresh[2].Add(1); return &lastType{} })
	note := func(part string, e store.Event) {
		n := fmt.Sprintf("%s%d", part, e.Seq)
		j.mu.Lock()
		j.notes = append(j.notes, n)
		j.mu.Unlock()
		j.applies <- n
	}
	j.a.OnApply(func(_ contract.ProjectID, _ *applied, e store.Event) { note("A", e) })
	j.b.OnApply(func(_ contract.ProjectID, _ *tally, e store.Event) { note("B", e) })
	j.c.OnApply(func(_ contract.ProjectID, _ *lastType, e store.Event) { note("C", e) })
	t.Cleanup(j.log.Close)
	return j
}

// takeNotes returns the notes made since the last call.
func (j *joined) takeNotes() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.notes
	j.notes = nil
	for range out {
		<-j.applies
	}
	return out
}

// notesFor is what one catch-up of events from..to notes: each event to each part, in
// join order.
func notesFor(from, to int64) []string {
	var out []string
	for s := from; s <= to; s++ {
		out = append(out, fmt.Sprintf("A%d", s), fmt.Sprintf("B%d", s), fmt.Sprintf("C%d", s))
	}
	return out
}

// TestLog_OneCursor checks that the parts of a Log share its cursor on SQLite and
// PostgreSQL: a catch-up made by one part's Read (or Write) applies each event once to
// every part's State, in join order, so another part's State is caught up with no read
// of its own, and reads no event again.
func TestLog_OneCursor(t *testing.T) {
	for _, be := range failingBackends {
		t.Run(be.name, func(t *testing.T) {
			ctx := t.Context()
			st := be.open(t)
			read := new(atomic.Int64)
			j := newJoined(t, eventlog.Remember(countingStore{Store: st, read: read}, nil))
			appendN(t, st, 2) // another instance's
			if err := j.a.Read(ctx, project, func(s *applied) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if got, want := j.takeNotes(), notesFor(1, 2); !slices.Equal(got, want) {
				t.Errorf("A's Read notified %v, want %v", got, want)
			}
			read.Store(0)
			hb := j.b.Lock(project)
			seq, held := hb.Seq(), slices.Clone(hb.State().seqs)
			hb.Unlock()
			if seq != 2 || !slices.Equal(held, []int64{1, 2}) {
				t.Errorf("B after A's Read, with no catch-up of its own: at %d holding %v, want 2 holding [1 2]", seq, held)
			}
			if err := j.b.Read(ctx, project, func(s *tally) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if got := j.takeNotes(); len(got) != 0 {
				t.Errorf("B's Read after A's applied %v again, want nothing", got)
			}
			if n := read.Load(); n != 0 {
				t.Errorf("B's Read after A's read %d events from the store, want none", n)
			}
			// A write through C: every part applies its event, from memory.
			if err := j.c.Write(ctx, project, func(tx store.Tx, s *lastType) error {
				if s.typ != "test.event" {
					return fmt.Errorf("C's State decided on %q, want the last event's type", s.typ)
				}
				return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.c", N: 1})
			}); err != nil {
				t.Fatal(err)
			}
			if got, want := j.takeNotes(), notesFor(3, 3); !slices.Equal(got, want) {
				t.Errorf("C's write notified %v, want %v", got, want)
			}
			if got := readState(t, j.a); !slices.EqualFunc(got, allEvents(t, st), sameEvent) {
				t.Errorf("A after C's write holds %s, want the log", seqs(got))
			}
			for i := range j.fresh {
				if n := j.fresh[i].Load(); n != 1 {
					t.Errorf("part %d made %d fresh States, want 1 (the project's first use)", i, n)
				}
			}
		})
	}
}

// TestLog_OneLock checks that the parts of a Log share each project's lock: while one
// part holds it, another part can take it neither within a bound nor for good, and Along
// hands the holder another part's State under the lock it holds.
func TestLog_OneLock(t *testing.T) {
	for _, be := range failingBackends {
		t.Run(be.name, func(t *testing.T) {
			ctx := t.Context()
			st := be.open(t)
			j := newJoined(t, eventlog.Remember(st, nil))
			appendN(t, st, 3)
			ha := j.a.Lock(project)
			if _, err := ha.CatchUp(ctx, st); err != nil {
				t.Fatal(err)
			}
			if hb, ok := j.b.LockWithin(ctx, project, time.Millisecond); ok {
				hb.Unlock()
				t.Fatal("B took the project's lock while A held it")
			}
			read := make(chan []int64)
			go func() {
				var got []int64
				err := j.b.Read(ctx, project, func(s *tally) error { got = slices.Clone(s.seqs); return nil })
				if err != nil {
					t.Error(err)
				}
				read <- got
			}()
			hb := eventlog.Along(ha, j.b)
			if hb.Seq() != 3 || !slices.Equal(hb.State().seqs, []int64{1, 2, 3}) {
				t.Errorf("Along: B at %d holding %v, want 3 holding [1 2 3], caught up by A's catch-up", hb.Seq(), hb.State().seqs)
			}
			hc := eventlog.Along(hb, j.c) // from any part's Held
			if hc.State().typ != "test.event" {
				t.Errorf("Along: C holds %q, want test.event", hc.State().typ)
			}
			if back := eventlog.Along(hc, j.a); back != ha {
				t.Error("Along back to A returned another Held than the one held")
			}
			ha.Unlock() // B's Read goes on only now: it would wait for good otherwise
			if got := <-read; !slices.Equal(got, []int64{1, 2, 3}) {
				t.Errorf("B's Read after A released the lock holds %v, want [1 2 3]", got)
			}
		})
	}
}

// TestLog_AlongRefuses checks that Along refuses what is a wiring error: a Driver of
// another Log (its State is under another lock), and a Held that is not locked.
func TestLog_AlongRefuses(t *testing.T) {
	_, _, mem, _ := openLog(t)
	j := newJoined(t, mem)
	other := eventlog.NewDriver(mem, newApplied)
	tests := []struct {
		name string
		call func()
	}{
		{"a Driver of another Log", func() {
			h := j.a.Lock(project)
			defer h.Unlock()
			eventlog.Along(h, other)
		}},
		{"a Held not locked", func() {
			h := j.a.Lock(project)
			h.Unlock()
			eventlog.Along(h, j.b)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Along returned, want a panic")
				}
			}()
			tt.call()
		})
	}
}

// TestLog_RebuildResetsAll checks, on SQLite and PostgreSQL, that a cursor found ahead of
// its log (a catch-up inside a transaction whose COMMIT then failed) gives every part a
// fresh State, each rebuilt from the log's start, whichever part's catch-up found it.
func TestLog_RebuildResetsAll(t *testing.T) {
	for _, be := range failingBackends {
		t.Run(be.name, func(t *testing.T) {
			ctx := t.Context()
			st := be.open(t)
			mem := eventlog.Remember(st, nil)
			j := newJoined(t, mem)
			appendN(t, st, 2)
			h := j.a.Lock(project)
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
			j.takeNotes()
			appendN(t, st, 1) // another instance takes the lost seq
			var got []int64
			if err := j.b.Read(ctx, project, func(s *tally) error { got = slices.Clone(s.seqs); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []int64{1, 2, 3}) {
				t.Errorf("B after the rebuild holds %v, want [1 2 3]", got)
			}
			if got := readState(t, j.a); !slices.EqualFunc(got, allEvents(t, st), sameEvent) {
				t.Errorf("A after B's rebuild holds %s, want the log", seqs(got))
			}
			hc := j.c.Lock(project)
			typ := hc.State().typ
			hc.Unlock()
			if typ != "test.event" {
				t.Errorf("C after the rebuild holds %q, want the log's last type test.event", typ)
			}
			for i := range j.fresh {
				if n := j.fresh[i].Load(); n != 2 {
					t.Errorf("part %d made %d fresh States, want 2 (first use, one rebuild)", i, n)
				}
			}
			if got, want := j.takeNotes(), notesFor(1, 3); !slices.Equal(got, want) {
				t.Errorf("the rebuild notified %v, want %v", got, want)
			}
		})
	}
}

// TestLog_PublishPerPart checks that releasing the lock publishes the snapshot of each
// part whose State moved, whichever part held the lock, and nothing for a part without
// a Publish.
func TestLog_PublishPerPart(t *testing.T) {
	for _, be := range failingBackends {
		t.Run(be.name, func(t *testing.T) {
			ctx := t.Context()
			st := be.open(t)
			j := newJoined(t, eventlog.Remember(st, nil))
			j.a.Publish(func(s *applied) any { return len(s.events) })
			j.b.Publish(func(s *tally) any { return slices.Clone(s.seqs) })
			appendN(t, st, 2)
			if err := j.c.Read(ctx, project, func(*lastType) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if s, ok := j.a.Snapshot(project); !ok || s.Seq != 2 || s.Value != 2 {
				t.Errorf("A's snapshot after C's Read = %+v (%v), want 2 events at 2", s, ok)
			}
			if s, ok := j.b.Snapshot(project); !ok || s.Seq != 2 || !slices.Equal(s.Value.([]int64), []int64{1, 2}) {
				t.Errorf("B's snapshot after C's Read = %+v (%v), want [1 2] at 2", s, ok)
			}
			if s, ok := j.c.Snapshot(project); ok {
				t.Errorf("C, with no Publish, has a snapshot %+v", s)
			}
			if err := j.a.Write(ctx, project, func(tx store.Tx, _ *applied) error {
				return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: 3})
			}); err != nil {
				t.Fatal(err)
			}
			if s, _ := j.b.Snapshot(project); s.Seq != 3 || !slices.Equal(s.Value.([]int64), []int64{1, 2, 3}) {
				t.Errorf("B's snapshot after A's write = %+v, want [1 2 3] at 3", s)
			}
		})
	}
}

// TestLog_FollowShared checks that the parts of a Log share a project's follow goroutine:
// any part's Follow keeps every part's State caught up, each event notified once to each
// part, the goroutine runs until the last stop of any part, and a failed wait reaches
// only the parts that follow.
func TestLog_FollowShared(t *testing.T) {
	st, _, _, _ := openLog(t)
	fail := new(atomic.Bool)
	j := newJoined(t, eventlog.Remember(failWait{Store: st, fail: fail}, nil))
	heard := make(chan string, 4)
	j.a.OnFollowError(func(_ contract.ProjectID, err error) { heard <- "A" })
	j.b.OnFollowError(func(_ contract.ProjectID, err error) { heard <- "B" })
	stopA, err := j.a.Follow(project)
	if err != nil {
		t.Fatal(err)
	}
	stopB, err := j.b.Follow(project)
	if err != nil {
		t.Fatal(err)
	}
	next := func(want ...string) {
		t.Helper()
		for _, w := range want {
			if got := <-j.applies; got != w {
				t.Fatalf("followed: notified %s, want %s", got, w)
			}
		}
	}
	appendN(t, st, 1) // another instance's
	next(notesFor(1, 1)...)
	stopA()
	appendN(t, st, 1)
	next(notesFor(2, 2)...) // B follows still: A's State moves too
	stopB()
	eventlog.WaitFollows(j.a) // returns once the one goroutine ended, for both parts
	// B alone follows; its wait fails: B hears it, A (not following) does not.
	fail.Store(true)
	stopB2, err := j.b.Follow(project)
	if err != nil {
		t.Fatal(err)
	}
	defer stopB2()
	if got := <-heard; got != "B" {
		t.Errorf("the failed wait reached %s, want B", got)
	}
	eventlog.WaitFollows(j.a)
	select {
	case got := <-heard:
		t.Errorf("the failed wait reached %s too, which does not follow", got)
	default:
	}
	h := j.c.Lock(project)
	err = h.FollowErr()
	h.Unlock()
	if !errors.Is(err, errFail) {
		t.Errorf("FollowErr through C = %v, want the failed wait's error: the goroutine is the project's", err)
	}
}

// TestLog_LateJoin checks that a part joined after the log's first use is caught up by a
// rebuild of every part at the next lock, so all the States stand at the one cursor.
func TestLog_LateJoin(t *testing.T) {
	st, _, mem, _ := openLog(t)
	l := eventlog.NewLog(mem)
	a := eventlog.Join(l, newApplied)
	appendN(t, st, 2)
	readState(t, a)
	b := eventlog.Join(l, func() *tally { return &tally{} })
	var got []int64
	if err := b.Read(t.Context(), project, func(s *tally) error { got = slices.Clone(s.seqs); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("the part joined late holds %v, want [1 2]", got)
	}
	if got := readState(t, a); !slices.EqualFunc(got, allEvents(t, st), sameEvent) {
		t.Errorf("the first part after the rebuild holds %s, want the log", seqs(got))
	}
}
