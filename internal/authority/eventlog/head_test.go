package eventlog_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

// openCounted returns a remembering store over a counted SQLite store with the test
// project and two events in its log.
func openCounted(t *testing.T) (mem store.Store, counted *storecount.Store) {
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
	appendN(t, st, 2)
	counted = storecount.Wrap(st)
	return eventlog.Remember(counted, nil), counted
}

// TestTx_HeldHead checks that a transaction asks the store for the head of a log it
// holds (locked, or appended to) once at most, and that what it answers then is the
// head the store would answer: the one locked, or the transaction's own last append.
// The head of a log it does not hold is read every time.
func TestTx_HeldHead(t *testing.T) {
	ctx := context.Background()
	// A step reads a head in the transaction; moves says it appends, moving the head.
	type step struct {
		moves bool
		read  func(tx store.Tx) (store.Head, error)
	}
	lock := step{read: func(tx store.Tx) (store.Head, error) { return tx.LockHead(ctx, string(project)) }}
	head := step{read: func(tx store.Tx) (store.Head, error) { return tx.Head(ctx, string(project)) }}
	add := step{moves: true, read: func(tx store.Tx) (store.Head, error) {
		e, err := tx.Append(ctx, store.NewEvent{Project: string(project), Type: "test.event", At: time.Now().UTC(), Actor: "system", Data: []byte(`{}`)})
		return store.Head{Seq: e.Seq, Hash: e.Hash}, err
	}}
	tests := []struct {
		name  string
		steps []step
		heads int64 // head reads the store saw
	}{
		{"locked, then read and locked again", []step{lock, head, lock}, 1},
		{"appended, then read and locked", []step{add, head, lock}, 0},
		{"locked, appended, read", []step{lock, add, head, add, head}, 1},
		{"read unlocked is read again", []step{head, head}, 2},
		{"read unlocked, then locked", []step{head, lock, head}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem, counted := openCounted(t)
			counted.Reset()
			var last store.Head
			err := mem.Update(ctx, func(tx store.Tx) error {
				for i, s := range tc.steps {
					h, err := s.read(tx)
					if err != nil {
						return err
					}
					if i > 0 && !s.moves && h != last {
						t.Errorf("step %d: head %d, want %d as before", i, h.Seq, last.Seq)
					}
					if s.moves && h.Seq != last.Seq+1 && i > 0 {
						t.Errorf("step %d: appended at %d, want %d", i, h.Seq, last.Seq+1)
					}
					last = h
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := counted.Counts().HeadReads; got != tc.heads {
				t.Errorf("the store saw %d head reads, want %d", got, tc.heads)
			}
			committed, err := counted.Head(ctx, string(project))
			if err != nil {
				t.Fatal(err)
			}
			if committed != last {
				t.Errorf("the transaction's last head %d, the committed head %d", last.Seq, committed.Seq)
			}
		})
	}
}

// TestCursor_KnownHead checks that a catch-up on the store under a ctx that carries a
// head of the log (WithHead) reaches at least that head without reading one, that a head of
// another project is not taken for its own, and that inside a transaction the head is
// read all the same: a transaction decides on the log as it holds it.
func TestCursor_KnownHead(t *testing.T) {
	ctx := context.Background()
	mem, counted := openCounted(t)
	appendN(t, counted, 2) // another instance's: the log is at 4, memory holds none of it
	apply := func(store.Event) error { return nil }
	tests := []struct {
		name  string
		ctx   context.Context
		inTx  bool
		want  int64 // where the cursor ends at least
		heads int64
	}{
		{"known head", eventlog.WithHead(ctx, project, 3), false, 3, 0},
		{"another project's head", eventlog.WithHead(ctx, "other", 3), false, 4, 1},
		{"no known head", ctx, false, 4, 1},
		{"in a transaction", eventlog.WithHead(ctx, project, 3), true, 4, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cur eventlog.Cursor
			counted.Reset()
			var err error
			if tc.inTx {
				err = mem.Update(ctx, func(tx store.Tx) error { return cur.CatchUp(tc.ctx, tx, project, apply) })
			} else {
				err = cur.CatchUp(tc.ctx, mem, project, apply)
			}
			if err != nil {
				t.Fatal(err)
			}
			if cur.Seq() < tc.want {
				t.Errorf("cursor at %d, want at least %d", cur.Seq(), tc.want)
			}
			if got := counted.Counts().HeadReads; got != tc.heads {
				t.Errorf("%d head reads, want %d", got, tc.heads)
			}
		})
	}
}
