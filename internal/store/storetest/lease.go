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
