package postgres_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
)

// roundTrips counts what a pool's connections send and wait for: a statement on its own,
// or a pipeline of several. The store's listener connection, whose LISTEN goes out when
// its goroutine gets to it (possibly while a measured transaction runs), is not counted:
// it is the connection whose statement is the LISTEN.
type roundTrips struct {
	n         atomic.Int64
	mu        sync.Mutex
	listening map[*pgx.Conn]bool
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.HasPrefix(d.SQL, "LISTEN ") {
		if r.listening == nil {
			r.listening = map[*pgx.Conn]bool{}
		}
		r.listening[c] = true
	}
	if !r.listening[c] {
		r.n.Add(1)
	}
	return ctx
}
func (*roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (*roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (*roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestLockLeasesHead_OneRoundTrip checks what LockLeasesHead costs a hop call's
// transaction on PostgreSQL: the locks of a Connection's lease rows and the head read
// after them travel in one round trip (the transaction's BEGIN with them), where
// LockLeases and Head, one after the other, take three.
func TestLockLeasesHead_OneRoundTrip(t *testing.T) {
	dsn := newDB(t)
	trips := &roundTrips{}
	s, err := postgres.OpenTraced(t.Context(), dsn, trips)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx := t.Context()
	if err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: "p1", Name: "p1", CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.CreateConnection(ctx, store.Connection{ID: "c1", Project: "p1", Name: "laptop", KeyCiphertext: []byte("sealed"), CreatedAt: t0}); err != nil {
			return err
		}
		for slot := range 2 {
			if err := tx.PutLease(ctx, store.Lease{Project: "p1", Connection: "c1", Slot: slot, WorkerID: "w", Generation: int64(slot + 1), ExpiresAt: t0.Add(time.Minute)}); err != nil {
				return err
			}
		}
		_, err := tx.Append(ctx, store.NewEvent{Project: "p1", Type: "t", At: t0, Data: []byte(`{}`)})
		return err
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	tests := []struct {
		name string
		call func(tx store.Tx) (store.Head, error)
		want int64
	}{
		{"LockLeasesHead", func(tx store.Tx) (store.Head, error) {
			_, h, err := tx.LockLeasesHead(ctx, "p1", "c1")
			return h, err
		}, 1},
		{"LockLeases, then Head", func(tx store.Tx) (store.Head, error) {
			if _, err := tx.LockLeases(ctx, "p1", "c1"); err != nil {
				return store.Head{}, err
			}
			return tx.Head(ctx, "p1")
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int64
			var h store.Head
			if err := s.Update(ctx, func(tx store.Tx) error {
				before := trips.n.Load()
				var err error
				h, err = tt.call(tx)
				n = trips.n.Load() - before
				return err
			}); err != nil {
				t.Fatalf("Update: %v", err)
			}
			if n != tt.want {
				t.Errorf("%s took %d round trips, want %d", tt.name, n, tt.want)
			}
			if h.Seq != 1 {
				t.Errorf("%s read head %d, want 1", tt.name, h.Seq)
			}
		})
	}
}
