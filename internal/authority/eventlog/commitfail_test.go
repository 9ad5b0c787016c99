package eventlog_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// lostType is the type of event whose transaction fails at COMMIT (see failingBackends).
const lostType = "test.lost_at_commit"

// testEvent is the payload of the tests' own events, of types the catalog does not list.
type testEvent struct {
	typ string
	N   int `json:"n"`
}

func (e testEvent) EventType() string { return e.typ }

// failingBackends open a fresh store holding project whose every transaction that
// appends a lostType event fails at COMMIT, after its functions returned nil: a deferred
// constraint, checked only at COMMIT, fails it for real. SQLite always; PostgreSQL when
// DOCKET_TEST_POSTGRES names a server.
var failingBackends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), "docket.db")
		st, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// Foreign keys are on in the store's connections; a deferred one is checked at
		// COMMIT, and the trigger adds a row whose parent does not exist.
		for _, q := range []string{
			`CREATE TABLE lost_parent (id TEXT PRIMARY KEY)`,
			`CREATE TABLE lost_child (parent TEXT REFERENCES lost_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
			`CREATE TRIGGER lost_at_commit AFTER INSERT ON events WHEN NEW.type = '` + lostType + `'
			 BEGIN INSERT INTO lost_child VALUES ('none'); END`,
		} {
			if _, err := db.ExecContext(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		return createProject(t, st)
	}},
	{"postgres", func(t *testing.T) store.Store {
		dsn := authoritytest.PostgresDSN(t)
		st, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		c, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		for _, q := range []string{
			`CREATE FUNCTION lost_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
			 BEGIN RAISE EXCEPTION 'this commit fails on purpose'; END $$`,
			`CREATE CONSTRAINT TRIGGER lost_at_commit AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
			 FOR EACH ROW WHEN (NEW.type = '` + lostType + `') EXECUTE FUNCTION lost_at_commit()`,
		} {
			if _, err := c.Exec(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		return createProject(t, st)
	}},
}

func createProject(t *testing.T, st store.Store) store.Store {
	t.Helper()
	if err := st.Update(t.Context(), func(tx store.Tx) error {
		return tx.CreateProject(t.Context(), store.Project{ID: string(project), Name: "p", CreatedAt: time.Now().UTC()})
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

// projection is what a part keeps of a log: the events it applied, emptied by its
// cursor's Reset.
type projection struct {
	cur     eventlog.Cursor
	applied []store.Event
	resets  int
}

func newProjection() *projection {
	p := &projection{}
	p.cur.Reset = func() { p.applied, p.resets = nil, p.resets+1 }
	return p
}

func (p *projection) apply(e store.Event) error {
	p.applied = append(p.applied, e)
	return nil
}

// TestCursor_FailedCommit catches a projection up inside a transaction that appended an
// event, as a part does after the Updates batched before its own appended theirs; then
// the transaction's COMMIT fails. Whatever happens next (a read, another commit of this
// process, another instance's commit taking the lost seq), the projection read afterwards
// holds exactly the log, without the lost event.
func TestCursor_FailedCommit(t *testing.T) {
	nexts := []struct {
		name string
		then func(t *testing.T, mem, other store.Store)
	}{
		{"read at once", func(*testing.T, store.Store, store.Store) {}},
		{"own commits take the lost seq", func(t *testing.T, mem, _ store.Store) { appendN(t, mem, 2) }},
		{"another instance takes the lost seq", func(t *testing.T, _, other store.Store) { appendN(t, other, 1) }},
	}
	for _, b := range failingBackends {
		for _, next := range nexts {
			t.Run(b.name+"/"+next.name, func(t *testing.T) {
				ctx := t.Context()
				st := b.open(t)
				var logged bytes.Buffer
				mem := eventlog.Remember(st, slog.New(slog.NewTextHandler(&logged, nil)))
				appendN(t, mem, 2)
				p := newProjection()
				if err := p.cur.CatchUp(ctx, mem, project, p.apply); err != nil {
					t.Fatal(err)
				}
				err := mem.Update(ctx, func(tx store.Tx) error {
					if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: lostType}); err != nil {
						return err
					}
					return p.cur.CatchUp(ctx, tx, project, p.apply)
				})
				if err == nil {
					t.Fatal("an Update whose COMMIT fails returned nil")
				}
				next.then(t, mem, st)
				if err := p.cur.CatchUp(ctx, mem, project, p.apply); err != nil {
					t.Fatalf("catch up after the failed commit: %v", err)
				}
				want := allEvents(t, st)
				if !slices.EqualFunc(p.applied, want, sameEvent) {
					t.Fatalf("projection after a failed commit holds %s, want the log %s", seqs(p.applied), seqs(want))
				}
				if p.resets != 1 {
					t.Errorf("projection rebuilt %d times, want once", p.resets)
				}
				// It heals itself, and says so: counted, and on the log at WARN.
				if n := eventlog.Rebuilds(mem); n != 1 || !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "rebuilt from the log") {
					t.Errorf("after one rebuild Rebuilds = %d and the log reads %q; want 1 and a warning", n, logged.String())
				}
			})
		}
	}
}

// TestCursor_FailedCommitNoReset checks that a cursor without Reset refuses to catch up
// once it holds an event a failed commit lost, rather than trust it.
func TestCursor_FailedCommitNoReset(t *testing.T) {
	ctx := t.Context()
	st := failingBackends[0].open(t)
	mem := eventlog.Remember(st, nil)
	var cur eventlog.Cursor
	apply := func(store.Event) error { return nil }
	if err := mem.Update(ctx, func(tx store.Tx) error {
		if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: lostType}); err != nil {
			return err
		}
		return cur.CatchUp(ctx, tx, project, apply)
	}); err == nil {
		t.Fatal("an Update whose COMMIT fails returned nil")
	}
	for range 2 {
		if err := cur.CatchUp(ctx, mem, project, apply); !errors.Is(err, eventlog.ErrDiverged) {
			t.Fatalf("catch up after the failed commit = %v, want %v", err, eventlog.ErrDiverged)
		}
	}
}

// TestCursor_FailedBatch is the case as group commit makes it: writers append at once,
// some of them lostType events, so that some transactions fail at COMMIT, while a part
// catches its projection up inside its own Updates, under its lock, as the ledgers do,
// and so applies its batch-mates' events before they commit. Read afterwards, the
// projection holds exactly the log.
func TestCursor_FailedBatch(t *testing.T) {
	for _, b := range failingBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			st := b.open(t)
			mem := eventlog.Remember(st, nil)
			p := newProjection()
			var mu sync.Mutex // the projection's lock
			const writers, each = 4, 40
			var wg sync.WaitGroup
			errs := make(chan error, writers+1)
			for w := range writers {
				wg.Go(func() { appendLossily(ctx, mem, w, each, errs) })
			}
			wg.Go(func() {
				for i := range each {
					mu.Lock()
					err := mem.Update(ctx, func(tx store.Tx) error {
						if _, err := tx.LockHead(ctx, string(project)); err != nil {
							return err
						}
						if err := p.cur.CatchUp(ctx, tx, project, p.apply); err != nil {
							return err
						}
						return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.part", N: i})
					})
					mu.Unlock()
					if errors.Is(err, eventlog.ErrDiverged) {
						errs <- fmt.Errorf("the part's Update: %w", err)
						return
					}
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if err := p.cur.CatchUp(ctx, mem, project, p.apply); err != nil {
				t.Fatal(err)
			}
			want := allEvents(t, st)
			if !slices.EqualFunc(p.applied, want, sameEvent) {
				t.Fatalf("projection holds %s, want the log %s (%d rebuilds)", seqs(p.applied), seqs(want), p.resets)
			}
			t.Logf("%d events in the log, projection rebuilt %d times", len(want), p.resets)
		})
	}
}

// appendLossily appends each events as writer w, one Update each, every fifth of them a
// lostType event whose transaction fails at COMMIT (and with it every Update batched in
// that transaction); it sends on errs when such an Update returns nil.
func appendLossily(ctx context.Context, mem store.Store, w, each int, errs chan<- error) {
	for i := range each {
		typ := "test.event"
		if (w+i)%5 == 0 {
			typ = lostType
		}
		err := mem.Update(ctx, func(tx store.Tx) error {
			return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: typ, N: i})
		})
		if typ == lostType && err == nil {
			errs <- errors.New("an Update of a lostType event returned nil")
			return
		}
	}
}

// TestCursor_CommittedAfterTx checks that a cursor caught up inside a transaction that
// then commits trusts what it applied again without reading the store: memory holds the
// events of that commit.
func TestCursor_CommittedAfterTx(t *testing.T) {
	ctx := t.Context()
	st, _, mem, read := openLog(t)
	appendN(t, st, 1) // another instance's event, read inside the transaction
	p := newProjection()
	if err := mem.Update(ctx, func(tx store.Tx) error {
		if err := p.cur.CatchUp(ctx, tx, project, p.apply); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.event", N: 1})
	}); err != nil {
		t.Fatal(err)
	}
	read.Store(0)
	if err := p.cur.CatchUp(ctx, mem, project, p.apply); err != nil {
		t.Fatal(err)
	}
	if got := read.Load(); got != 0 || p.resets != 0 {
		t.Errorf("catch-up after the commit read %d events and rebuilt %d times, want none", got, p.resets)
	}
	if want := allEvents(t, st); !slices.EqualFunc(p.applied, want, sameEvent) {
		t.Errorf("projection holds %s, want the log %s", seqs(p.applied), seqs(want))
	}
}
