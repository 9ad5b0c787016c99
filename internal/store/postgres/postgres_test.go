package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/storetest"
)

// envDSN names the PostgreSQL server the tests use, as a postgres:// URL whose user may
// create databases. Unset, the tests skip.
const envDSN = "DOCKET_TEST_POSTGRES"

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newDB creates a fresh database docket_test_<random> on the server named by envDSN,
// dropped when t ends, and returns its DSN.
func newDB(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		tb.Skipf("%s is not set: set it to a postgres:// URL to test the PostgreSQL store", envDSN)
	}
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("%s must be a postgres:// URL", envDSN)
	}
	name := "docket_test_" + strings.ToLower(rand.Text())
	admin, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("connect to %s: %v", envDSN, err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx := context.Background() // the test's context has ended by now
		admin, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("connect to drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

func openAt(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

var harness = storetest.Harness{
	NewDB: func(t *testing.T) func(t *testing.T) store.Store {
		dsn := newDB(t)
		return func(t *testing.T) store.Store { return openAt(t, dsn) }
	},
	Raw: func(t *testing.T, s store.Store, query string, args ...any) error {
		t.Helper()
		return postgres.ExecRaw(t.Context(), s.(*postgres.Store), false, query, args...)
	},
	Tamper: func(t *testing.T, s store.Store, query string, args ...any) {
		t.Helper()
		if err := postgres.ExecRaw(t.Context(), s.(*postgres.Store), true, query, args...); err != nil {
			t.Fatalf("tamper %q: %v", query, err)
		}
	},
	// A constraint trigger deferred to COMMIT raises there.
	FailCommit: func(t *testing.T, s store.Store, typ string) {
		t.Helper()
		for _, q := range []string{
			`CREATE FUNCTION fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
			 BEGIN RAISE EXCEPTION 'this commit fails on purpose'; END $$`,
			`CREATE CONSTRAINT TRIGGER fail_commit AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
			 FOR EACH ROW WHEN (NEW.type = '` + typ + `') EXECUTE FUNCTION fail_commit()`,
		} {
			if err := postgres.ExecRaw(t.Context(), s.(*postgres.Store), false, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	},
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, harness)
}

// TestStore_Immutable checks the trigger that refuses changes to events and releases made
// with SQL, outside the store.
func TestStore_Immutable(t *testing.T) {
	s := openAt(t, newDB(t))
	err := s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Append(t.Context(), store.NewEvent{Project: "p1", Type: "t", At: t0, Data: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		_, err := tx.PutRelease(t.Context(), store.Release{ID: "r", Version: "1", Digest: []byte("d"), CreatedAt: t0})
		return err
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	tests := []struct {
		name  string
		query string
	}{
		{"update event", `UPDATE events SET type = 'forged'`},
		{"delete event", `DELETE FROM events`},
		{"update release", `UPDATE releases SET digest = '\x00'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := postgres.ExecRaw(t.Context(), s, false, tt.query)
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s = %v, want %v", tt.query, err, store.ErrConflict)
			}
		})
	}
	if _, err := s.Verify(t.Context(), "p1"); err != nil {
		t.Errorf("Verify after refused changes: %v", err)
	}
}

// TestUpdate_StuckStatement holds a log's head locked on one instance while another
// instance's Update waits for that lock: its caller's context, which does not end a
// running batch, does not bound the wait either, so the batch's own deadline must. The
// Update fails once that deadline passes, with nothing of it kept, and the instance
// writes again afterwards.
func TestUpdate_StuckStatement(t *testing.T) {
	dsn := newDB(t)
	a, b := openAt(t, dsn), openAt(t, dsn)
	const bound = 300 * time.Millisecond
	postgres.SetBatchTimeout(a, bound)
	locked, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	unlock := func() { releaseOnce.Do(func() { close(release) }) }
	defer unlock() // a failed test still ends both Updates, so the stores close
	held := make(chan error, 1)
	go func() {
		held <- b.Update(t.Context(), func(tx store.Tx) error {
			if _, err := tx.LockHead(t.Context(), "q"); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	stuck := make(chan error, 1)
	go func() {
		stuck <- a.Update(t.Context(), func(tx store.Tx) error {
			if _, err := tx.Append(t.Context(), store.NewEvent{Project: "p", ID: "before", Type: "t", At: t0, Data: json.RawMessage(`{}`)}); err != nil {
				return err
			}
			_, err := tx.LockHead(t.Context(), "q")
			return err
		})
	}()
	select {
	case err := <-stuck:
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, postgres.ErrBatchDeadline) {
			t.Errorf("Update stuck on a lock = %v, want the batch's deadline, said as such (%v)", err, postgres.ErrBatchDeadline)
		}
	case <-time.After(20 * bound):
		t.Fatalf("Update stuck on a lock still waits %v after its batch's deadline of %v", 20*bound, bound)
	}
	unlock()
	if err := <-held; err != nil {
		t.Fatalf("the instance holding the lock: %v", err)
	}
	if evs, err := a.Events(t.Context(), "p", 0, 10); err != nil || len(evs) != 0 {
		t.Fatalf("after a batch cut short, p holds %v (%v), want nothing", evs, err)
	}
	if err := a.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Append(t.Context(), store.NewEvent{Project: "p", ID: "after", Type: "t", At: t0, Data: json.RawMessage(`{}`)})
		return err
	}); err != nil {
		t.Fatalf("Update after a batch cut short: %v", err)
	}
}

// TestStore_WaitAcrossInstances checks that an append by one instance wakes a waiter on
// another that shares the database (LISTEN/NOTIFY, or polling at worst).
func TestStore_WaitAcrossInstances(t *testing.T) {
	dsn := newDB(t)
	a, b := openAt(t, dsn), openAt(t, dsn)
	done := make(chan error, 1)
	go func() { _, err := b.Wait(t.Context(), "p1", 0); done <- err }()
	if err := a.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Append(t.Context(), store.NewEvent{Project: "p1", Type: "t", At: t0, Data: json.RawMessage(`{}`)})
		return err
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Wait on the other instance: %v", err)
	}
}

// TestOpen_Together checks that instances opening a fresh database at once migrate it
// once (the advisory lock).
func TestOpen_Together(t *testing.T) {
	dsn := newDB(t)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			s, err := postgres.Open(t.Context(), dsn)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("Open: %v", err)
		}
	}
}

// TestStore_Crash kills a process appending from 8 writers at once (group commit) in the
// middle of its load, several times, and checks that the chain verifies and that every
// acknowledged event is in the database.
func TestStore_Crash(t *testing.T) {
	dsn := newDB(t)
	storetest.RunCrash(t, "TestStore_CrashChild", []string{"DOCKET_STORE_CRASH_DSN=" + dsn},
		func(t *testing.T) store.Store { return openAt(t, dsn) })
}

// TestStore_CrashChild is the process TestStore_Crash kills; run alone, it skips.
func TestStore_CrashChild(t *testing.T) {
	storetest.CrashChild(t, func(ctx context.Context) (store.Store, error) {
		return postgres.Open(ctx, os.Getenv("DOCKET_STORE_CRASH_DSN"))
	})
}
