package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

// leaseFixture creates project p1 with connection c1 on s.
func leaseFixture(t *testing.T, s store.Store) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: "p1", Name: "p1", CreatedAt: t0}); err != nil {
			return err
		}
		return tx.CreateConnection(ctx, store.Connection{ID: "c1", Project: "p1", Name: "laptop", KeyCiphertext: []byte("sealed"), CreatedAt: t0})
	})
}

// testLeases checks the lease row: never granted, written, read back, and refused when
// it would go back a generation or name a missing Connection.
func testLeases(t *testing.T, h Harness) {
	s := open(t, h)
	leaseFixture(t, s)
	ctx := t.Context()
	_, err := s.Lease(ctx, "c1")
	wantErr(t, "Lease never granted", err, store.ErrNotFound)
	var locked store.Lease
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		locked, err = tx.LockLease(ctx, "p1", "c1")
		return err
	})
	if locked.Generation != 0 || locked.Connection != "c1" {
		t.Errorf("LockLease of a lease never granted = %+v, want generation 0 of c1", locked)
	}
	l := store.Lease{Project: "p1", Connection: "c1", WorkerID: "w1", Generation: 2, ExpiresAt: t0.Add(time.Second)}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutLease(ctx, l) })
	got, err := s.Lease(ctx, "c1")
	wantErr(t, "Lease", err, nil)
	if diff := cmp.Diff(l, got); diff != "" {
		t.Errorf("Lease after PutLease (-want +got):\n%s", diff)
	}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err = tx.LockLease(ctx, "p1", "c1")
		return err
	})
	if diff := cmp.Diff(l, got); diff != "" {
		t.Errorf("LockLease after PutLease (-want +got):\n%s", diff)
	}
	tests := []struct {
		name string
		l    func(l store.Lease) store.Lease
		want error
	}{
		{"renewed", func(l store.Lease) store.Lease { l.ExpiresAt = l.ExpiresAt.Add(time.Minute); return l }, nil},
		{"older generation", func(l store.Lease) store.Lease { l.Generation = 1; return l }, store.ErrConflict},
		{"no worker", func(l store.Lease) store.Lease { l.WorkerID = ""; return l }, store.ErrInvalid},
		{"generation 0", func(l store.Lease) store.Lease { l.Generation = 0; return l }, store.ErrInvalid},
		{"missing connection", func(l store.Lease) store.Lease { l.Connection = "nope"; return l }, store.ErrNotFound},
		{"another project's connection", func(l store.Lease) store.Lease { l.Project = "nope"; return l }, store.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutLease(ctx, tt.l(l)) })
			wantErr(t, "PutLease", err, tt.want)
		})
	}
}

// testLeaseLocked runs read-modify-write acquisitions of one lease on two instances at
// once: LockLease must serialize them, so no acquisition is lost and no generation is
// granted twice — even the first two, when there is no row to lock yet.
func testLeaseLocked(t *testing.T, h Harness) {
	openDB := h.NewDB(t)
	stores := []store.Store{openDB(t), openDB(t)}
	leaseFixture(t, stores[0])
	const writers, each = 6, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for range each {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					l, err := tx.LockLease(t.Context(), "p1", "c1")
					if err != nil {
						return err
					}
					l.WorkerID, l.Generation = fmt.Sprintf("w%d", w), l.Generation+1
					return tx.PutLease(t.Context(), l)
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
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
	got, err := stores[1].Lease(t.Context(), "c1")
	wantErr(t, "Lease", err, nil)
	if got.Generation != writers*each {
		t.Errorf("generation after %d acquisitions = %d: an acquisition was lost", writers*each, got.Generation)
	}
}

// testLeasesHead checks LockLeasesHead: the lease rows LockLeases returns, and the head
// Head returns in the same transaction, the transaction's own appends included.
func testLeasesHead(t *testing.T, h Harness) {
	s := open(t, h)
	leaseFixture(t, s)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: "p2", Name: "p2", CreatedAt: t0}); err != nil {
			return err
		}
		return tx.CreateConnection(ctx, store.Connection{ID: "c2", Project: "p2", Name: "laptop", KeyCiphertext: []byte("sealed"), CreatedAt: t0})
	})
	slot := func(slot int, worker string, gen int64) store.Lease {
		return store.Lease{Project: "p1", Connection: "c1", Slot: slot, WorkerID: worker, Generation: gen, ExpiresAt: t0.Add(time.Minute)}
	}
	never := store.Lease{Project: "p1", Connection: "c1", ExpiresAt: time.Unix(0, 0).UTC()}
	tests := []struct {
		name    string
		before  func(ctx context.Context, tx store.Tx) error // committed first
		in      func(ctx context.Context, tx store.Tx) error // run in the transaction, before the call
		project string
		want    []store.Lease
		seq     int64 // the head's seq
		err     error
	}{
		{name: "never granted, empty log", project: "p1", want: []store.Lease{never}},
		{name: "two slots and a log", project: "p1", want: []store.Lease{slot(0, "w1", 1), slot(1, "w2", 2)}, seq: 2,
			before: func(ctx context.Context, tx store.Tx) error {
				if _, err := tx.AppendAll(ctx, []store.NewEvent{newEvent("p1", 1), newEvent("p1", 2)}); err != nil {
					return err
				}
				if err := tx.PutLease(ctx, slot(0, "w1", 1)); err != nil {
					return err
				}
				return tx.PutLease(ctx, slot(1, "w2", 2))
			}},
		{name: "own appends", project: "p1", want: []store.Lease{slot(0, "w1", 1), slot(1, "w2", 2)}, seq: 4,
			in: func(ctx context.Context, tx store.Tx) error {
				_, err := tx.AppendAll(ctx, []store.NewEvent{newEvent("p1", 3), newEvent("p1", 4)})
				return err
			}},
		{name: "another project's connection", project: "p2", err: store.ErrInvalid},
		{name: "no project", err: store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				update(t, s, tt.before)
			}
			var got, locked []store.Lease
			var head, read store.Head
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
				if tt.in != nil {
					if err := tt.in(ctx, tx); err != nil {
						return err
					}
				}
				var err error
				if got, head, err = tx.LockLeasesHead(ctx, tt.project, "c1"); err != nil {
					return err
				}
				if locked, err = tx.LockLeases(ctx, tt.project, "c1"); err != nil {
					return err
				}
				read, err = tx.Head(ctx, tt.project)
				return err
			})
			wantErr(t, "LockLeasesHead", err, tt.err)
			if tt.err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LockLeasesHead's leases (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(locked, got); diff != "" {
				t.Errorf("LockLeasesHead's leases against LockLeases's (-LockLeases +LockLeasesHead):\n%s", diff)
			}
			if head != read || head.Seq != tt.seq {
				t.Errorf("LockLeasesHead's head = %+v, want seq %d, as Head read it (%+v)", head, tt.seq, read)
			}
		})
	}
}

// testLeasesHeadRead checks Reader.LeasesHead against Leases and Head read apart: no
// row and an empty log, rows and a log, another project's head beside them.
func testLeasesHeadRead(t *testing.T, h Harness) {
	s := open(t, h)
	leaseFixture(t, s)
	slot := func(slot int, worker string, gen int64) store.Lease {
		return store.Lease{Project: "p1", Connection: "c1", Slot: slot, WorkerID: worker, Generation: gen, ExpiresAt: t0.Add(time.Minute)}
	}
	tests := []struct {
		name    string
		before  func(ctx context.Context, tx store.Tx) error
		project string
		want    []store.Lease
		seq     int64
	}{
		{name: "no row, empty log", project: "p1", want: []store.Lease{}},
		{name: "no row, a log", project: "p1", want: []store.Lease{}, seq: 1,
			before: func(ctx context.Context, tx store.Tx) error {
				_, err := tx.AppendAll(ctx, []store.NewEvent{newEvent("p1", 1)})
				return err
			}},
		{name: "two slots", project: "p1", want: []store.Lease{slot(0, "w1", 1), slot(1, "w2", 2)}, seq: 1,
			before: func(ctx context.Context, tx store.Tx) error {
				if err := tx.PutLease(ctx, slot(1, "w2", 2)); err != nil {
					return err
				}
				return tx.PutLease(ctx, slot(0, "w1", 1))
			}},
		{name: "another project's empty head", project: "p9", want: []store.Lease{slot(0, "w1", 1), slot(1, "w2", 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				update(t, s, tt.before)
			}
			ctx := t.Context()
			got, head, err := s.LeasesHead(ctx, tt.project, "c1")
			wantErr(t, "LeasesHead", err, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LeasesHead's leases (-want +got):\n%s", diff)
			}
			apart, err := s.Leases(ctx, "c1")
			wantErr(t, "Leases", err, nil)
			if diff := cmp.Diff(apart, got); diff != "" {
				t.Errorf("LeasesHead's leases against Leases's (-Leases +LeasesHead):\n%s", diff)
			}
			read, err := s.Head(ctx, tt.project)
			wantErr(t, "Head", err, nil)
			if head != read || head.Seq != tt.seq {
				t.Errorf("LeasesHead's head = %+v, want seq %d, as Head read it (%+v)", head, tt.seq, read)
			}
		})
	}
}

// testLeasesHeadAfterLock runs writers on two instances at once that each lock the lease
// rows with LockLeasesHead and append one event: the head must be read after the rows
// are locked, so that every append lands right after the head its writer read (a head
// read before the lock would miss the commit of the writer that held the rows).
func testLeasesHeadAfterLock(t *testing.T, h Harness) {
	openDB := h.NewDB(t)
	stores := []store.Store{openDB(t), openDB(t)}
	leaseFixture(t, stores[0])
	const writers, each = 6, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range each {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					_, head, err := tx.LockLeasesHead(t.Context(), "p1", "c1")
					if err != nil {
						return err
					}
					// Hold the rows a while, so that the other writers queue on them.
					time.Sleep(time.Millisecond)
					e, err := tx.Append(t.Context(), newEvent("p1", w*each+i+1))
					if err != nil {
						return err
					}
					if e.Seq != head.Seq+1 {
						return fmt.Errorf("appended seq %d after the lease rows were locked at head %d: the head was read before the lock", e.Seq, head.Seq)
					}
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
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
}
