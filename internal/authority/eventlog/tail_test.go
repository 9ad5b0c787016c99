package eventlog_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// countingStore counts the events read from it, on the store and in its transactions.
type countingStore struct {
	store.Store
	read *atomic.Int64
}

func (c countingStore) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	es, err := c.Store.Events(ctx, project, after, limit)
	c.read.Add(int64(len(es)))
	return es, err
}

func (c countingStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return c.Store.Update(ctx, func(tx store.Tx) error { return fn(countingTx{Tx: tx, read: c.read}) })
}

type countingTx struct {
	store.Tx
	read *atomic.Int64
}

func (c countingTx) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	es, err := c.Tx.Events(ctx, project, after, limit)
	c.read.Add(int64(len(es)))
	return es, err
}

const project = contract.ProjectID("p")

// TestCursor_Remembered checks that a cursor caught up through a remembering store
// applies exactly the log, in order, whoever wrote it: the events this process committed
// come from memory (read counts none), and what another instance wrote (here: an Update
// on the store underneath, which the memory never sees), what a failed Update appended
// and what is beyond the memory's reach are read from the store.
func TestCursor_Remembered(t *testing.T) {
	ctx := context.Background()
	// Each step writes, then catches the cursor up; read is how many events the catch-up
	// may read from the store.
	type step struct {
		name  string
		write func(t *testing.T, mem, other store.Store)
		read  int64
	}
	own := func(n int) func(*testing.T, store.Store, store.Store) {
		return func(t *testing.T, mem, _ store.Store) { appendN(t, mem, n) }
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"own commits come from memory", []step{
			{"own", own(3), 0},
			{"own again", own(1), 0},
			{"nothing new", own(0), 0},
		}},
		{"another instance's events are read", []step{
			{"own", own(2), 0},
			{"other", func(t *testing.T, _, other store.Store) { appendN(t, other, 2) }, 2},
			{"own after the other's", own(2), 0},
		}},
		{"own after another's, unread", []step{
			{"other then own", func(t *testing.T, mem, other store.Store) {
				appendN(t, other, 1)
				appendN(t, mem, 2)
			}, 3},
		}},
		{"a failed update is never remembered", []step{
			{"own", own(1), 0},
			{"failed, then own", func(t *testing.T, mem, _ store.Store) {
				failAppend(t, mem)
				appendN(t, mem, 1)
			}, 0},
		}},
		{"a failed update's seq taken by another instance", []step{
			{"own", own(1), 0},
			{"failed, then other", func(t *testing.T, mem, other store.Store) {
				failAppend(t, mem)
				appendN(t, other, 1)
			}, 1},
		}},
		{"more than the memory holds", []step{
			{"own", own(1), 0},
			{"own, past the memory", own(1100), eventlog.MaxEventPage},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, counted, mem, read := openLog(t)
			var cur eventlog.Cursor
			var applied []store.Event
			apply := func(e store.Event) error { applied = append(applied, e); return nil }
			for _, s := range tc.steps {
				s.write(t, mem, counted)
				read.Store(0)
				if err := cur.CatchUp(ctx, mem, project, apply); err != nil {
					t.Fatalf("%s: catch up: %v", s.name, err)
				}
				if got := read.Load(); got > s.read {
					t.Errorf("%s: catch-up read %d events from the store, want at most %d", s.name, got, s.read)
				}
				want := allEvents(t, st)
				if !slices.EqualFunc(applied, want, sameEvent) {
					t.Fatalf("%s: applied %s, want the log %s", s.name, seqs(applied), seqs(want))
				}
				if len(want) > 0 && cur.Seq() != want[len(want)-1].Seq {
					t.Errorf("%s: cursor at %d, want %d", s.name, cur.Seq(), want[len(want)-1].Seq)
				}
			}
		})
	}
}

// TestCursor_CatchUpTo checks that a cursor asked to reach a head reaches at least it,
// and reads nothing when it is there already.
func TestCursor_CatchUpTo(t *testing.T) {
	ctx := context.Background()
	_, counted, mem, read := openLog(t)
	appendN(t, counted, 3) // another instance's: not in memory
	var cur eventlog.Cursor
	n := 0
	apply := func(store.Event) error { n++; return nil }
	for _, tc := range []struct {
		to        int64
		wantSeq   int64
		wantReads int64
	}{
		{to: 0, wantSeq: 0, wantReads: 0},
		{to: 2, wantSeq: 3, wantReads: 3}, // a read takes what the log holds
		{to: 3, wantSeq: 3, wantReads: 0},
	} {
		read.Store(0)
		if err := cur.CatchUpTo(ctx, mem, project, tc.to, apply); err != nil {
			t.Fatal(err)
		}
		if cur.Seq() != tc.wantSeq || read.Load() != tc.wantReads || int64(n) != tc.wantSeq {
			t.Errorf("CatchUpTo(%d): cursor %d after %d applied, %d read; want %d, %d read", tc.to, cur.Seq(), n, read.Load(), tc.wantSeq, tc.wantReads)
		}
	}
	// Latest names only what this process committed.
	if got := eventlog.Latest(mem, project); got != 0 {
		t.Errorf("Latest after another instance's events = %d, want 0", got)
	}
	appendN(t, mem, 2)
	appendN(t, counted, 1)
	if got := eventlog.Latest(mem, project); got != 5 {
		t.Errorf("Latest = %d, want 5, the last seq committed here", got)
	}
	read.Store(0)
	if err := cur.CatchUpTo(ctx, mem, project, eventlog.Latest(mem, project), apply); err != nil {
		t.Fatal(err)
	}
	if cur.Seq() != 5 || read.Load() != 0 {
		t.Errorf("CatchUpTo(Latest): cursor %d, %d read; want 5, none read", cur.Seq(), read.Load())
	}
}

// openLog opens a fresh SQLite store holding project, and returns it, the same store
// counting the events read from it (its Updates play another instance, which the memory
// never sees), the remembering store over that, and the count.
func openLog(t *testing.T) (st, counted, mem store.Store, read *atomic.Int64) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Update(ctx, func(tx store.Tx) error {
		return tx.CreateProject(ctx, store.Project{ID: string(project), Name: "p", CreatedAt: time.Now().UTC()})
	}); err != nil {
		t.Fatal(err)
	}
	read = new(atomic.Int64)
	counted = countingStore{Store: st, read: read}
	return st, counted, eventlog.Remember(counted, nil), read
}

var errFail = errors.New("fail on purpose")

// failAppend runs an Update that appends an event and then fails, so nothing commits.
func failAppend(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	err := st.Update(ctx, func(tx store.Tx) error {
		if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.failed", N: 0}); err != nil {
			return err
		}
		return errFail
	})
	if !errors.Is(err, errFail) {
		t.Fatalf("failed update = %v, want errFail", err)
	}
}

// appendN appends n events to project's log, one Update each.
func appendN(t *testing.T, st store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := st.Update(ctx, func(tx store.Tx) error {
			return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: i})
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func allEvents(t *testing.T, st store.Store) []store.Event {
	t.Helper()
	var out []store.Event
	if err := eventlog.Scan(context.Background(), st, project, 0, -1, func(e store.Event) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameEvent(a, b store.Event) bool {
	return a.Seq == b.Seq && a.ID == b.ID && a.Type == b.Type && a.Hash == b.Hash && string(a.Data) == string(b.Data) && a.At.Equal(b.At)
}

// seqs names the events by seq and type, the first few of a long list.
func seqs(es []store.Event) string {
	var out []string
	for i, e := range es {
		if i == 8 {
			out = append(out, fmt.Sprintf("… %d in all", len(es)))
			break
		}
		out = append(out, fmt.Sprintf("%d:%s", e.Seq, e.Type))
	}
	return fmt.Sprint(out)
}
