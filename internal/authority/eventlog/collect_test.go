package eventlog_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/store"
)

// TestCollect checks that the events appended through eventlog in a transaction of
// Collect reach the store in one AppendAll: at the end, or before fn reads the log (so it
// reads what it wrote), or together with a direct append; that HeadLeft counts them
// without appending them; that another log's events are not held; and that a failed fn
// appends nothing. The log it leaves is the one Appends would leave, remembered as it is.
func TestCollect(t *testing.T) {
	ctx := context.Background()
	var errBoom = errors.New("boom")
	at := time.Now().UTC()
	add := func(n int) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			return eventlog.Append(ctx, tx, project, "system", at, testEvent{typ: "test.event", N: n})
		}
	}
	// wantSeq checks what a read of the head answers inside fn.
	wantSeq := func(want int64, read func(tx store.Tx) (int64, error)) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			got, err := read(tx)
			if err == nil && got != want {
				err = fmt.Errorf("head seq %d, want %d", got, want)
			}
			return err
		}
	}
	head := func(tx store.Tx) (int64, error) { h, err := tx.Head(ctx, string(project)); return h.Seq, err }
	left := func(tx store.Tx) (int64, error) { return eventlog.HeadLeft(ctx, tx, project) }
	direct := func(tx store.Tx) error {
		e, err := tx.Append(ctx, store.NewEvent{Project: string(project), Type: "test.direct", At: at, Actor: "system", Data: []byte(`{}`)})
		if err == nil && e.Seq != 5 {
			err = fmt.Errorf("direct Append after two held events = seq %d, want 5", e.Seq)
		}
		return err
	}
	other := func(tx store.Tx) error {
		return eventlog.Append(ctx, tx, "other", "system", at, testEvent{typ: "test.event"})
	}
	fail := func(store.Tx) error { return errBoom }
	tests := []struct {
		name      string
		steps     []func(tx store.Tx) error
		err       error
		appendAll int64 // AppendAll calls the store saw
		append    int64 // Append calls the store saw
		events    int   // the test log's events after it (two before)
	}{
		{"held to the end", []func(store.Tx) error{add(1), add(2), add(3)}, nil, 1, 0, 5},
		{"a read of the head appends first", []func(store.Tx) error{add(1), add(2), wantSeq(4, head), add(3)}, nil, 2, 0, 5},
		{"HeadLeft counts without appending", []func(store.Tx) error{add(1), add(2), wantSeq(4, left), add(3)}, nil, 1, 0, 5},
		{"a direct append joins the held", []func(store.Tx) error{add(1), add(2), direct}, nil, 1, 0, 5},
		{"another log is not held", []func(store.Tx) error{add(1), other}, nil, 1, 1, 3},
		{"a failure appends nothing", []func(store.Tx) error{add(1), add(2), fail}, errBoom, 0, 0, 2},
		{"nothing collected", []func(store.Tx) error{wantSeq(2, head)}, nil, 0, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, counted := openCounted(t)
			counted.Reset()
			err := mem.Update(ctx, func(tx store.Tx) error {
				return eventlog.Collect(ctx, tx, project, func(tx store.Tx) error {
					for _, step := range tt.steps {
						if err := step(tx); err != nil {
							return err
						}
					}
					return nil
				})
			})
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("Update = %v, want %v", err, tt.err)
			}
			c := counted.Counts()
			if c.ByMethod["Tx.AppendAll"] != tt.appendAll || c.ByMethod["Tx.Append"] != tt.append {
				t.Errorf("the store saw %d AppendAll and %d Append, want %d and %d",
					c.ByMethod["Tx.AppendAll"], c.ByMethod["Tx.Append"], tt.appendAll, tt.append)
			}
			evs := allEvents(t, mem)
			if len(evs) != tt.events {
				t.Fatalf("the log holds %d events, want %d", len(evs), tt.events)
			}
			if h, err := mem.Verify(ctx, string(project)); err != nil || h.Seq != int64(tt.events) {
				t.Fatalf("Verify = %v, %v; want head seq %d", h, err, tt.events)
			}
			// What the commit appended is remembered as the store holds it.
			for _, e := range evs[2:] {
				if r := eventlog.Recent(mem, project, e.Seq-1, e.Seq); len(r) != 1 || r[0].Hash != e.Hash {
					t.Errorf("memory of event %d = %v, want the event the store holds", e.Seq, r)
				}
			}
		})
	}
}

// TestRecent_OneAllocation checks that the events a catch-up takes from memory come in
// one slice sized for them, not one grown event by event.
func TestRecent_OneAllocation(t *testing.T) {
	ctx := context.Background()
	mem, _ := openCounted(t)
	at := time.Now().UTC()
	if err := mem.Update(ctx, func(tx store.Tx) error {
		return eventlog.Collect(ctx, tx, project, func(tx store.Tx) error {
			for n := range 8 {
				if err := eventlog.Append(ctx, tx, project, "system", at, testEvent{typ: "test.event", N: n}); err != nil {
					return err
				}
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if got := len(eventlog.Recent(mem, project, 2, 10)); got != 8 {
		t.Fatalf("Recent remembers %d of the 8 events committed, want 8", got)
	}
	if got := eventlog.Recent(mem, project, 10, 12); got != nil {
		t.Fatalf("Recent past the log = %v, want nil", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { eventlog.Recent(mem, project, 2, 10) }); allocs > 1 && !raceEnabled {
		t.Fatalf("Recent of 8 events allocates %.0f times, want 1", allocs)
	}
}

// TestCursor_CatchUpFromMemoryReusesItsBuffer checks that a cursor catching up, event
// after event, on what this process committed takes the events from memory into one
// buffer it keeps, not into a new slice each time: a catch-up runs on every write and
// every wake of a held call.
func TestCursor_CatchUpFromMemoryReusesItsBuffer(t *testing.T) {
	ctx := context.Background()
	mem, counted := openCounted(t)
	at := time.Now().UTC()
	commit := func(n int) int64 {
		t.Helper()
		var head int64
		if err := mem.Update(ctx, func(tx store.Tx) error {
			return eventlog.Collect(ctx, tx, project, func(tx store.Tx) error {
				if err := eventlog.Append(ctx, tx, project, "system", at, testEvent{typ: "test.event", N: n}); err != nil {
					return err
				}
				var err error
				head, err = eventlog.HeadLeft(ctx, tx, project)
				return err
			})
		}); err != nil {
			t.Fatal(err)
		}
		return head
	}
	var c eventlog.Cursor
	applied := 0
	apply := func(store.Event) error { applied++; return nil }
	if err := c.CatchUpTo(ctx, mem, project, commit(0), apply); err != nil {
		t.Fatal(err)
	}
	counted.Reset()
	var ms runtime.MemStats
	var mallocs uint64
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for n := range 20 {
		head := commit(n + 1)
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		if err := c.CatchUpTo(ctx, mem, project, head, apply); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - before
	}
	if c.Seq() != commit(99)-1 || applied < 21 {
		t.Fatalf("the cursor is at %d having applied %d events, want the log's head", c.Seq(), applied)
	}
	if reads := counted.Counts().ByMethod["Events"]; reads != 0 {
		t.Fatalf("the catch-ups read events from the store %d times, want none: they read memory", reads)
	}
	if mallocs > 2 {
		t.Fatalf("20 catch-ups from memory allocated %d times, want at most 2 (the buffer, grown once)", mallocs)
	}
}
