package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

func testAppendRead(t *testing.T, h Harness) {
	s := open(t, h)
	appended := appendN(t, s, "p1", 3)
	got := allEvents(t, s, "p1")
	if diff := cmp.Diff(appended, got); diff != "" {
		t.Fatalf("Events differ from what Append returned (-want +got):\n%s", diff)
	}
	var prev store.Hash
	for i, e := range got {
		ne := newEvent("p1", i+1)
		want := store.Event{Project: "p1", Seq: int64(i + 1), ID: ne.ID, Type: ne.Type, At: ne.At,
			Actor: ne.Actor, Data: ne.Data, DataHash: store.DataHash(ne.Data), PrevHash: prev}
		want.Hash = store.EventHash(want)
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("event %d (-want +got):\n%s", i+1, diff)
		}
		prev = e.Hash
	}
	head, err := s.Head(t.Context(), "p1")
	wantErr(t, "Head", err, nil)
	if diff := cmp.Diff(store.Head{Seq: 3, Hash: prev}, head); diff != "" {
		t.Errorf("Head (-want +got):\n%s", diff)
	}
}

func testPage(t *testing.T, h Harness) {
	s := open(t, h)
	appendN(t, s, "p1", 25)
	tests := []struct {
		name        string
		after       int64
		limit       int
		first, last int64 // 0, 0: empty
	}{
		{"first page", 0, 10, 1, 10},
		{"middle page", 10, 10, 11, 20},
		{"short last page", 20, 10, 21, 25},
		{"past the end", 25, 10, 0, 0},
		{"default limit", 0, 0, 1, 25},
		{"resume mid-log", 17, 3, 18, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := s.Events(t.Context(), "p1", tt.after, tt.limit)
			wantErr(t, "Events", err, nil)
			var first, last int64
			if len(page) > 0 {
				first, last = page[0].Seq, page[len(page)-1].Seq
			}
			if first != tt.first || last != tt.last || (len(page) > 0 && int64(len(page)) != last-first+1) {
				t.Errorf("Events(after %d, limit %d) = %d events %d..%d, want %d..%d", tt.after, tt.limit, len(page), first, last, tt.first, tt.last)
			}
		})
	}
}

func testBatch(t *testing.T, h Harness) {
	s := open(t, h)
	appendN(t, s, "p1", 2)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := 3; i <= 102; i++ {
			if _, err := tx.Append(ctx, newEvent("p1", i)); err != nil {
				return err
			}
		}
		return nil
	})
	appendN(t, s, "p2", 1)
	evs := allEvents(t, s, "p1")
	if len(evs) != 102 {
		t.Fatalf("got %d events, want 102", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.ID != fmt.Sprintf("ev-%d", i+1) {
			t.Fatalf("event %d is seq %d id %s", i+1, e.Seq, e.ID)
		}
	}
	if _, err := s.Verify(t.Context(), "p1"); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func testProjects(t *testing.T, h Harness) {
	s := open(t, h)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := 1; i <= 3; i++ {
			for _, p := range []string{"a", "b"} {
				if _, err := tx.Append(ctx, newEvent(p, i)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	for _, p := range []string{"a", "b"} {
		evs := allEvents(t, s, p)
		var seqs []int64
		for _, e := range evs {
			seqs = append(seqs, e.Seq)
		}
		if diff := cmp.Diff([]int64{1, 2, 3}, seqs); diff != "" {
			t.Errorf("seqs of %s (-want +got):\n%s", p, diff)
		}
		if _, err := s.Verify(t.Context(), p); err != nil {
			t.Errorf("Verify(%s): %v", p, err)
		}
	}
	if evs := allEvents(t, s, "c"); len(evs) != 0 {
		t.Errorf("Events of a log never written = %d events, want none", len(evs))
	}
}

func testBlob(t *testing.T, h Harness) {
	s := open(t, h)
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", store.BlobThreshold) + `"}`)
	var appended []store.Event
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := 1; i <= 2; i++ { // the same data twice is stored once
			ne := newEvent("p1", i)
			ne.Data = big
			e, err := tx.Append(ctx, ne)
			if err != nil {
				return err
			}
			appended = append(appended, e)
		}
		return nil
	})
	if diff := cmp.Diff(appended, allEvents(t, s, "p1")); diff != "" {
		t.Fatalf("events with blob data (-want +got):\n%s", diff)
	}
	b, err := s.Blob(t.Context(), store.DataHash(big))
	wantErr(t, "Blob", err, nil)
	if string(b) != string(big) {
		t.Errorf("Blob returned %d bytes, want the %d bytes of the event data", len(b), len(big))
	}
	_, err = s.Blob(t.Context(), store.DataHash([]byte("absent")))
	wantErr(t, "Blob(absent)", err, store.ErrNotFound)
	if _, err := s.Verify(t.Context(), "p1"); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func testRefused(t *testing.T, h Harness) {
	s := open(t, h)
	appendN(t, s, "p1", 1)
	tests := []struct {
		name string
		edit func(*store.NewEvent)
		want error
	}{
		{"no project", func(e *store.NewEvent) { e.Project = "" }, store.ErrInvalid},
		{"no type", func(e *store.NewEvent) { e.Type = "" }, store.ErrInvalid},
		{"data not JSON", func(e *store.NewEvent) { e.Data = json.RawMessage(`{"a":`) }, store.ErrNoEventData},
		{"data null", func(e *store.NewEvent) { e.Data = json.RawMessage(`null`) }, store.ErrNoEventData},
		{"no data", func(e *store.NewEvent) { e.Data = nil }, store.ErrNoEventData},
		{"data blank", func(e *store.NewEvent) { e.Data = json.RawMessage(" \n") }, store.ErrNoEventData},
		{"zero time", func(e *store.NewEvent) { e.At = e.At.AddDate(-3000, 0, 0) }, store.ErrInvalid},
		{"id reused in project", func(e *store.NewEvent) { e.ID = "ev-1" }, store.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ne := newEvent("p1", 2)
			tt.edit(&ne)
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
				_, err := tx.Append(ctx, ne)
				return err
			})
			wantErr(t, "Append", err, tt.want)
		})
	}
	t.Run("id reused in another project", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.Append(ctx, newEvent("p2", 1))
			return err
		})
	})
	t.Run("minted id", func(t *testing.T) {
		ne := newEvent("p1", 2)
		ne.ID = ""
		var e store.Event
		update(t, s, func(ctx context.Context, tx store.Tx) (err error) {
			e, err = tx.Append(ctx, ne)
			return err
		})
		if e.ID == "" || e.Seq != 2 {
			t.Errorf("Append with no id = seq %d id %q, want seq 2 and a minted id", e.Seq, e.ID)
		}
	})
}

var errBoom = errors.New("boom")

func testRollback(t *testing.T, h Harness) {
	s := open(t, h)
	err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: "p1", Name: "One", CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.PutNode(ctx, "p1", store.Node{ID: "n1", Kind: "fact", Data: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		for i := 1; i <= 3; i++ {
			if _, err := tx.Append(ctx, newEvent("p1", i)); err != nil {
				return err
			}
		}
		return fmt.Errorf("after writing: %w", errBoom)
	})
	wantErr(t, "Update", err, errBoom)
	ctx := t.Context()
	_, err = s.Project(ctx, "p1")
	wantErr(t, "Project after rollback", err, store.ErrNotFound)
	if nodes, err := s.Nodes(ctx, "p1"); err != nil || len(nodes) != 0 {
		t.Errorf("Nodes after rollback = %v, %v; want none", nodes, err)
	}
	if evs := allEvents(t, s, "p1"); len(evs) != 0 {
		t.Errorf("Events after rollback = %d, want none", len(evs))
	}
	if head, err := s.Head(ctx, "p1"); err != nil || head != (store.Head{}) {
		t.Errorf("Head after rollback = %v, %v; want the zero head", head, err)
	}
	// The next transaction starts the log at 1: no sequence number was consumed.
	if evs := appendN(t, s, "p1", 1); evs[0].Seq != 1 || !evs[0].PrevHash.IsZero() {
		t.Errorf("first event after rollback = seq %d prev %s, want seq 1 prev zero", evs[0].Seq, evs[0].PrevHash)
	}
}

func testConcurrent(t *testing.T, h Harness) {
	const writers, each = 8, 25
	stores := concurrentWrites(t, h, writers, each, func(tx store.Tx, w, i int) error {
		ne := newEvent("p1", 0)
		ne.ID = fmt.Sprintf("w%d-%d", w, i)
		_, err := tx.Append(t.Context(), ne)
		return err
	})
	evs := allEvents(t, stores[1], "p1")
	if len(evs) != writers*each {
		t.Fatalf("got %d events, want %d", len(evs), writers*each)
	}
	ids := make(map[string]bool)
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: seqs must be 1, 2, 3… without gaps", i+1, e.Seq)
		}
		if ids[e.ID] {
			t.Fatalf("event id %s stored twice", e.ID)
		}
		ids[e.ID] = true
	}
	if head, err := stores[0].Verify(t.Context(), "p1"); err != nil || head.Seq != writers*each {
		t.Fatalf("Verify = %v, %v; want head seq %d", head, err, writers*each)
	}
}

// concurrentWrites runs writers goroutines over two store instances on one database, each
// running write(tx, w, i) in an Update of its own each times, and returns the instances
// once all ended, failing t for every write that failed.
func concurrentWrites(t *testing.T, h Harness, writers, each int, write func(tx store.Tx, w, i int) error) []store.Store {
	openDB := h.NewDB(t)
	stores := []store.Store{openDB(t), openDB(t)}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range each {
				if err := s.Update(t.Context(), func(tx store.Tx) error { return write(tx, w, i) }); err != nil {
					errs <- fmt.Errorf("writer %d write %d: %w", w, i, err)
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
	return stores
}

func testWait(t *testing.T, h Harness) {
	openDB := h.NewDB(t)
	s := openDB(t)
	appendN(t, s, "p1", 1)
	// wait returns Wait's error, and fails t unless a nil error comes with a seq above
	// after that the log holds.
	wait := func(ctx context.Context, t *testing.T, project string, after int64) error {
		seq, err := s.Wait(ctx, project, after)
		if err == nil {
			head, herr := s.Head(t.Context(), project)
			if herr != nil || seq <= after || seq > head.Seq {
				t.Errorf("Wait(%s, after %d) = seq %d; want one above %d and at most the head %d (%v)", project, after, seq, after, head.Seq, herr)
			}
		}
		return err
	}
	t.Run("already past", func(t *testing.T) {
		wantErr(t, "Wait(after 0)", wait(t.Context(), t, "p1", 0), nil)
	})
	t.Run("woken by append", func(t *testing.T) {
		done := make(chan error, 1)
		go func() { done <- wait(t.Context(), t, "p1", 1) }()
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.Append(ctx, newEvent("p1", 2))
			return err
		})
		wantErr(t, "Wait(after 1)", <-done, nil)
	})
	t.Run("ended by context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- wait(ctx, t, "p1", 2) }()
		cancel()
		wantErr(t, "Wait(after 2)", <-done, context.Canceled)
	})
	// A Store that knows a log's head from its own commits may skip reading it when it
	// waits (docs/architecture.md, "Group commit in the store"); another Store's append
	// made before the wait must still be seen: on PostgreSQL through its notification,
	// on SQLite at the poll, within a second.
	t.Run("another Store's append before the wait", func(t *testing.T) {
		other := openDB(t)
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.Append(ctx, newEvent("p3", 1))
			return err
		})
		wantErr(t, "Wait(p3, after 0)", wait(t.Context(), t, "p3", 0), nil)
		update(t, other, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.Append(ctx, newEvent("p3", 2))
			return err
		})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		wantErr(t, "Wait(p3, after 1) past another Store's append", wait(ctx, t, "p3", 1), nil)
	})
	t.Run("other log does not wake", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- wait(ctx, t, "quiet", 0) }()
		appendN(t, s, "p2", 1)
		cancel()
		wantErr(t, "Wait(quiet)", <-done, context.Canceled)
	})
}

// testLockHead shows that a head read with LockHead stays the head until the transaction
// ends, across instances: each transaction locks, then appends, and its event must follow
// the locked head directly. Without the lock, another instance's commit in between would
// push the event further.
func testLockHead(t *testing.T, h Harness) {
	openDB := h.NewDB(t)
	stores := []store.Store{openDB(t), openDB(t)}
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range each {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					head, err := tx.LockHead(t.Context(), "p1")
					if err != nil {
						return err
					}
					ne := newEvent("p1", 0)
					ne.ID = fmt.Sprintf("w%d-%d", w, i)
					e, err := tx.Append(t.Context(), ne)
					if err != nil {
						return err
					}
					if e.Seq != head.Seq+1 {
						return fmt.Errorf("locked head %d but appended seq %d", head.Seq, e.Seq)
					}
					own, err := tx.LockHead(t.Context(), "p1")
					if err != nil {
						return err
					}
					if own.Seq != e.Seq || own.Hash != e.Hash {
						return fmt.Errorf("LockHead after own append = %d, want %d", own.Seq, e.Seq)
					}
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d append %d: %w", w, i, err)
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
	if head, err := stores[0].Head(t.Context(), "p1"); err != nil || head.Seq != writers*each {
		t.Fatalf("Head = %v, %v; want seq %d", head, err, writers*each)
	}
}
