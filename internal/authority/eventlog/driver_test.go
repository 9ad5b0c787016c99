package eventlog_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/store"
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
