package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// testGroupCommit runs many writers at once on two instances of one database, so that
// an implementation that commits the Updates arriving together in one transaction does so,
// and mixes Updates that succeed with ones that fail after appending, ones whose write is
// refused (a taken id) and ones that append to two logs after locking and reading a head.
// Each Update must return its own function's error; a failed one must leave nothing, the
// others everything; each successful one must be readable through the other instance the
// moment it returns (acknowledged only once committed); and both logs must verify without
// a gap.
func testGroupCommit(t *testing.T, h Harness) {
	openDB := h.NewDB(t)
	stores := []store.Store{openDB(t), openDB(t)}
	update(t, stores[0], func(ctx context.Context, tx store.Tx) error {
		ne := newEvent("p1", 0)
		ne.ID = "seed"
		_, err := tx.Append(ctx, ne)
		return err
	})
	const writers, each = 8, 24
	var (
		mu   sync.Mutex
		want = map[string]map[string]bool{"p1": {"seed": true}, "p2": {}}
	)
	kept := func(project, id string) {
		mu.Lock()
		defer mu.Unlock()
		want[project][id] = true
	}
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		s, other := stores[w%2], stores[(w+1)%2]
		wg.Go(func() {
			ctx := t.Context()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := groupStep(ctx, s, other, (w+i)%4, id, kept); err != nil {
					errs <- fmt.Errorf("writer %d step %d: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, project := range []string{"p1", "p2"} {
		evs := allEvents(t, stores[1], project)
		got := make(map[string]bool)
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("%s: event %d has seq %d: seqs must be 1, 2, 3… without gaps", project, i+1, e.Seq)
			}
			if got[e.ID] {
				t.Fatalf("%s: event id %s stored twice", project, e.ID)
			}
			got[e.ID] = true
		}
		if len(got) != len(want[project]) {
			t.Errorf("%s holds %d events, want %d", project, len(got), len(want[project]))
		}
		for id := range want[project] {
			if !got[id] {
				t.Errorf("%s lacks acknowledged event %s", project, id)
			}
		}
		for _, s := range stores {
			if head, err := s.Verify(t.Context(), project); err != nil || head.Seq != int64(len(evs)) {
				t.Errorf("Verify(%s) = %v, %v; want head seq %d", project, head, err, len(evs))
			}
		}
	}
}

// groupStep runs one Update of kind on s and checks what it returns; kept records the
// events that must be in the logs.
func groupStep(ctx context.Context, s, other store.Store, kind int, id string, kept func(project, id string)) error {
	fail := fmt.Errorf("step %s: %w", id, errBoom)
	var appended []store.Event
	err := s.Update(ctx, func(tx store.Tx) error {
		switch kind {
		case 0: // one event
			ne := newEvent("p1", 0)
			ne.ID = id
			e, err := tx.Append(ctx, ne)
			appended = append(appended, e)
			return err
		case 1: // appends, then fails: nothing may stay
			ne := newEvent("p1", 0)
			ne.ID = id
			if _, err := tx.Append(ctx, ne); err != nil {
				return err
			}
			return fail
		case 2: // appends, then a write the store refuses
			ne := newEvent("p1", 0)
			ne.ID = id
			if _, err := tx.Append(ctx, ne); err != nil {
				return err
			}
			ne.ID = "seed"
			_, err := tx.Append(ctx, ne)
			return err
		}
		// Two logs, after locking and reading a head: each event follows the head locked.
		for _, project := range []string{"p1", "p2"} {
			head, err := tx.LockHead(ctx, project)
			if err != nil {
				return err
			}
			read, err := tx.Head(ctx, project)
			if err != nil {
				return err
			}
			if read != head {
				return fmt.Errorf("Head(%s) = %d after LockHead %d in the same transaction", project, read.Seq, head.Seq)
			}
			ne := newEvent(project, 0)
			ne.ID = id
			e, err := tx.Append(ctx, ne)
			if err != nil {
				return err
			}
			if e.Seq != head.Seq+1 || e.PrevHash != head.Hash {
				return fmt.Errorf("%s: appended seq %d after head %d: want the next one, linked to it", project, e.Seq, head.Seq)
			}
			appended = append(appended, e)
		}
		return nil
	})
	switch kind {
	case 1:
		if err != fail { // Update returns fn's error unchanged: the same value
			return fmt.Errorf("update returned %v, want the function's own error %v", err, fail)
		}
		return nil
	case 2:
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("update with a taken id returned %v, want ErrConflict", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	for _, e := range appended {
		kept(e.Project, e.ID)
		// Acknowledged means committed: another instance reads the event at once.
		evs, err := other.Events(ctx, e.Project, e.Seq-1, 1)
		if err != nil {
			return err
		}
		if len(evs) != 1 || evs[0].ID != e.ID || evs[0].Hash != e.Hash {
			return fmt.Errorf("acknowledged event %s (%s seq %d) is not committed: another instance reads %v", e.ID, e.Project, e.Seq, evs)
		}
	}
	return nil
}

// testGroupPanic panics in one Update while others write at once: the panic reaches the
// caller whose function panicked, with its value; its writes are gone and every other
// Update commits.
func testGroupPanic(t *testing.T, h Harness) {
	s := open(t, h)
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					ne := newEvent("p1", 0)
					ne.ID = fmt.Sprintf("w%d-%d", w, i)
					_, err := tx.Append(t.Context(), ne)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range each {
			got := func() (v any) {
				defer func() { v = recover() }()
				_ = s.Update(t.Context(), func(tx store.Tx) error {
					ne := newEvent("p1", 0)
					ne.ID = fmt.Sprintf("panic-%d", i)
					if _, err := tx.Append(t.Context(), ne); err != nil {
						return err
					}
					panic(errBoom)
				})
				return nil
			}()
			if got != errBoom { // the panic value itself
				errs <- fmt.Errorf("an update whose function panicked with %v: recovered %v", errBoom, got)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	evs := allEvents(t, s, "p1")
	if len(evs) != writers*each {
		t.Errorf("p1 holds %d events, want %d (none of the panicking Updates')", len(evs), writers*each)
	}
	if head, err := s.Verify(t.Context(), "p1"); err != nil || head.Seq != int64(len(evs)) {
		t.Errorf("Verify = %v, %v; want head seq %d", head, err, len(evs))
	}
}

// testCancelled gives Update a context that has ended: it returns the context's error and
// does not run the function.
func testCancelled(t *testing.T, h Harness) {
	s := open(t, h)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	err := s.Update(ctx, func(tx store.Tx) error {
		ran = true
		return nil
	})
	wantErr(t, "Update with an ended context", err, context.Canceled)
	if ran {
		t.Error("Update ran the function of an ended context")
	}
	appendN(t, s, "p1", 1) // the store still writes
}

// testCancelledRunning ends the context of an Update while its function writes, beside
// writers whose Updates share its transactions (group commit). The driver would end a
// statement interrupted midway by its context, and with it the whole transaction (pgx
// closes the connection; SQLite rolls back), failing the other callers' writes too. The
// caller whose context ended gets its own error and nothing of its own is kept; every
// other Update commits.
func testCancelledRunning(t *testing.T, h Harness) {
	s := open(t, h)
	const writers, rounds = 6, 8
	var (
		mu   sync.Mutex
		kept = map[string]bool{}
	)
	errs := make(chan error, writers)
	stop := writeBeside(t, s, writers, func(w int, id string, err error) bool {
		if err != nil {
			errs <- fmt.Errorf("writer %d beside an Update whose context ended: %w", w, err)
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		kept[id] = true
		return true
	})
	for r := range rounds {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		err := s.Update(ctx, func(tx store.Tx) error {
			// Write until the caller gives up, so that its context ends while a
			// statement runs; then say so, as a function that checks its context does.
			for i := 0; ctx.Err() == nil; i++ {
				ne := newEvent("p1", 0)
				ne.ID = fmt.Sprintf("cancelled-%d-%d", r, i)
				if _, err := tx.Append(ctx, ne); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("round %d: Update whose context ended as it wrote = %v, want its own %v", r, err, context.DeadlineExceeded)
		}
	}
	stop()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	evs := allEvents(t, s, "p1")
	for _, e := range evs {
		if !kept[e.ID] {
			t.Fatalf("p1 holds event %s, which no Update that returned nil appended", e.ID)
		}
	}
	if len(evs) != len(kept) {
		t.Errorf("p1 holds %d events, want the %d acknowledged", len(evs), len(kept))
	}
	if head, err := s.Verify(t.Context(), "p1"); err != nil || head.Seq != int64(len(evs)) {
		t.Errorf("Verify = %v, %v; want head seq %d", head, err, len(evs))
	}
}

// failsAtCommit is the type of event whose transaction testCommitFails makes fail at
// COMMIT ([Harness.FailCommit]).
const failsAtCommit = "test.fails_at_commit"

// testCommitFails makes the COMMIT of every transaction that appends a failsAtCommit
// event fail, after its functions returned nil, while other writers share its
// transactions (group commit). An Update that returns nil has its event in the log, one
// that returns an error has nothing there, an Update in a transaction whose COMMIT failed
// never returns nil, and the store writes on afterwards.
func testCommitFails(t *testing.T, h Harness) {
	if h.FailCommit == nil {
		t.Skip("the harness cannot make a commit fail")
	}
	s := open(t, h)
	h.FailCommit(t, s, failsAtCommit)
	poisoned := func(ctx context.Context, id string) error {
		return s.Update(ctx, func(tx store.Tx) error {
			ne := newEvent("p1", 0)
			ne.ID, ne.Type = id, failsAtCommit
			_, err := tx.Append(ctx, ne)
			return err
		})
	}
	if err := poisoned(t.Context(), "alone"); err == nil {
		t.Fatal("an Update whose COMMIT failed returned nil")
	}
	if evs := allEvents(t, s, "p1"); len(evs) != 0 {
		t.Fatalf("after a failed COMMIT p1 holds %d events, want none", len(evs))
	}

	const writers, rounds = 6, 16
	var (
		mu   sync.Mutex
		kept = map[string]bool{}
		lost = map[string]bool{}
	)
	stop := writeBeside(t, s, writers, func(_ int, id string, err error) bool {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			kept[id] = true
		} else {
			lost[id] = true // its batch-mate's COMMIT failed
		}
		return true
	})
	for r := range rounds {
		if err := poisoned(t.Context(), fmt.Sprintf("poisoned-%d", r)); err == nil {
			t.Errorf("round %d: an Update whose COMMIT failed returned nil", r)
		}
	}
	stop()
	evs := allEvents(t, s, "p1")
	for _, e := range evs {
		if !kept[e.ID] {
			t.Fatalf("p1 holds event %s, which no Update that returned nil appended (lost: %v)", e.ID, lost[e.ID])
		}
	}
	if len(evs) != len(kept) {
		t.Errorf("p1 holds %d events, want the %d acknowledged", len(evs), len(kept))
	}
	t.Logf("%d Updates committed, %d failed with a batch-mate's COMMIT", len(kept), len(lost))
	appendN(t, s, "p2", 2) // the store still writes
	for _, p := range []string{"p1", "p2"} {
		if head, err := s.Verify(t.Context(), p); err != nil || head.Seq != int64(len(allEvents(t, s, p))) {
			t.Errorf("Verify(%s) = %v, %v", p, head, err)
		}
	}
}

// writeBeside starts writers goroutines, each making one-event Updates of p1, event ids
// w<writer>-<i>, one after the other, so that they share transactions with the Updates
// of a test (group commit). Each Update's id and error go to done, and a writer stops
// when done returns false. The function returned stops the writers and waits for them.
func writeBeside(t *testing.T, s store.Store, writers int, done func(w int, id string, err error) bool) (stop func()) {
	t.Helper()
	var wg sync.WaitGroup
	stopped := make(chan struct{}) // closed by stop
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stopped:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				err := s.Update(t.Context(), func(tx store.Tx) error {
					ne := newEvent("p1", 0)
					ne.ID = id
					_, err := tx.Append(t.Context(), ne)
					return err
				})
				if !done(w, id, err) {
					return
				}
			}
		})
	}
	return func() {
		close(stopped)
		wg.Wait()
	}
}
