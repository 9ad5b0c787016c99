package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storetest"
)

// harness runs the conformance suite on files in t.TempDir().
var harness = storetest.Harness{
	NewDB: func(t *testing.T) func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), "docket.db")
		return func(t *testing.T) store.Store {
			t.Helper()
			return openAt(t, path)
		}
	},
	Raw: func(t *testing.T, s store.Store, query string, args ...any) error {
		t.Helper()
		return sqlite.ExecRaw(t.Context(), s.(*sqlite.Store), false, query, args...)
	},
	Tamper: func(t *testing.T, s store.Store, query string, args ...any) {
		t.Helper()
		if err := sqlite.ExecRaw(t.Context(), s.(*sqlite.Store), true, query, args...); err != nil {
			t.Fatalf("tamper %q: %v", query, err)
		}
	},
	// A trigger adds a row whose deferred foreign key names no row: foreign keys are on
	// in every Store's connections, and a deferred one is checked only at COMMIT.
	FailCommit: func(t *testing.T, s store.Store, typ string) {
		t.Helper()
		for _, q := range []string{
			`CREATE TABLE fail_parent (id TEXT PRIMARY KEY)`,
			`CREATE TABLE fail_child (parent TEXT REFERENCES fail_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
			`CREATE TRIGGER fail_commit AFTER INSERT ON events WHEN NEW.type = '` + typ + `'
			 BEGIN INSERT INTO fail_child VALUES ('none'); END`,
		} {
			if err := sqlite.ExecRaw(t.Context(), s.(*sqlite.Store), false, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	},
}

func openAt(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, harness)
}

// TestStore_Immutable checks the triggers that refuse changes to events and releases made
// with SQL, outside the store.
func TestStore_Immutable(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "docket.db"))
	tests := []struct {
		name  string
		query string
	}{
		{"update event", `UPDATE events SET type = 'forged'`},
		{"delete event", `DELETE FROM events`},
		{"update a head row's event columns", `UPDATE events SET type = 'forged' WHERE seq = 0`},
		{"update release", `UPDATE releases SET digest = X'00'`},
	}
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sqlite.ExecRaw(t.Context(), s, false, tt.query)
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s = %v, want %v", tt.query, err, store.ErrConflict)
			}
		})
	}
	if _, err := s.Verify(t.Context(), "p1"); err != nil {
		t.Errorf("Verify after refused changes: %v", err)
	}
}

// TestOpen_Reopen checks that opening a database again applies no migration twice and
// keeps the log.
func TestOpen_Reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	s := openAt(t, path)
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Append(t.Context(), store.NewEvent{Project: "p1", Type: "t", At: t0, Data: json.RawMessage(`{}`)})
		return err
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = openAt(t, path)
	head, err := s.Verify(t.Context(), "p1")
	if err != nil || head.Seq != 1 {
		t.Fatalf("Verify after reopen = %v, %v; want seq 1", head, err)
	}
}

// TestOpen_Files checks that the database is in WAL mode and that its files are private
// to their owner (files 0600).
func TestOpen_Files(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	s := openAt(t, path)
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Append(t.Context(), store.NewEvent{Project: "p1", Type: "t", At: t0, Data: json.RawMessage(`{}`)})
		return err
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	for _, name := range []string{path, path + "-wal"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatalf("stat %s (WAL mode keeps a -wal file while open): %v", name, err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(name), mode)
		}
	}
}

// TestUpdate_OtherWriter checks appends after another Store on the same file moved the
// log past the head this Store cached: the next event still follows the last one, and an
// id the other Store used is still refused.
func TestUpdate_OtherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	a, b := openAt(t, path), openAt(t, path)
	appendOne := func(s *sqlite.Store, id string) (store.Event, error) {
		var e store.Event
		err := s.Update(t.Context(), func(tx store.Tx) (err error) {
			e, err = tx.Append(t.Context(), store.NewEvent{Project: "p1", ID: id, Type: "t", At: t0, Data: json.RawMessage(`{}`)})
			return err
		})
		return e, err
	}
	tests := []struct {
		name    string
		s       *sqlite.Store
		id      string
		wantSeq int64 // 0: want ErrConflict
	}{
		{"a starts the log", a, "e1", 1},
		{"b appends behind a's back", b, "e2", 2},
		{"b appends again", b, "e3", 3},
		{"a reuses b's id", a, "e3", 0},
		{"a appends after b", a, "e4", 4},
		{"b appends after a", b, "e5", 5},
	}
	var prev store.Hash
	for _, tt := range tests {
		e, err := appendOne(tt.s, tt.id)
		if tt.wantSeq == 0 {
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("%s: Append = %v, want %v", tt.name, err, store.ErrConflict)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Append: %v", tt.name, err)
		}
		if e.Seq != tt.wantSeq || e.PrevHash != prev {
			t.Fatalf("%s: Append = seq %d prev %s, want seq %d prev %s", tt.name, e.Seq, e.PrevHash, tt.wantSeq, prev)
		}
		prev = e.Hash
	}
	for _, s := range []*sqlite.Store{a, b} {
		if head, err := s.Verify(t.Context(), "p1"); err != nil || head.Seq != 5 || head.Hash != prev {
			t.Errorf("Verify = %v, %v; want seq 5 hash %s", head, err, prev)
		}
	}
}

// TestUpdate_SeenThrough ends the context of an Update while its function runs, before
// its writes: a function that started is seen through, so its writes are committed
// (an interrupted statement would make SQLite roll back the whole transaction, and with
// it the other Updates of its batch), and so are those of an Update that follows.
func TestUpdate_SeenThrough(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "docket.db"))
	ctx, cancel := context.WithCancel(t.Context())
	err := s.Update(ctx, func(tx store.Tx) error {
		cancel()
		if _, err := tx.Append(ctx, store.NewEvent{Project: "p1", ID: "e1", Type: "t", At: t0, Data: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		_, err := tx.Head(ctx, "p1")
		return err
	})
	if err != nil {
		t.Fatalf("Update whose context ended as it ran = %v, want nil", err)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Append(t.Context(), store.NewEvent{Project: "p1", ID: "e2", Type: "t", At: t0, Data: json.RawMessage(`{}`)})
		return err
	})
	if err != nil {
		t.Fatalf("Update after it = %v", err)
	}
	if head, err := s.Verify(t.Context(), "p1"); err != nil || head.Seq != 2 {
		t.Errorf("Verify = %v, %v; want seq 2", head, err)
	}
}

// TestStore_IntegrityCheck overwrites 8 bytes of a b-tree page behind the store: SQLite's
// own check names the damage.
func TestStore_IntegrityCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.IntegrityCheck(t.Context()); err != nil {
		t.Fatalf("IntegrityCheck of a fresh store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Page 2 is a table's b-tree page; its header starts the page (page size 4096).
	if _, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 4096+1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Logf("open refused: %v", err)
		return // refusing to open is detection too
	}
	defer s.Close()
	if err := s.IntegrityCheck(t.Context()); err == nil {
		t.Error("IntegrityCheck after 8 bytes were overwritten found nothing")
	}
}

// TestStore_Crash kills a process appending from 8 writers at once (group commit) in the
// middle of its load, several times, and checks that the chain verifies and that every
// acknowledged event is in the file.
func TestStore_Crash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docket.db")
	storetest.RunCrash(t, "TestStore_CrashChild", []string{"DOCKET_STORE_CRASH_FILE=" + path},
		func(t *testing.T) store.Store { return openAt(t, path) })
}

// TestStore_CrashChild is the process TestStore_Crash kills; run alone, it skips.
func TestStore_CrashChild(t *testing.T) {
	storetest.CrashChild(t, func(ctx context.Context) (store.Store, error) {
		return sqlite.Open(ctx, os.Getenv("DOCKET_STORE_CRASH_FILE"))
	})
}

// TestOpen_UpgradeHeads upgrades a data directory written before migration 0051 moved the
// logs' heads into the events table: each log verifies to the head it had, appends
// continue its chain, an id used before the upgrade is still refused, and removing the
// last event is still found.
func TestOpen_UpgradeHeads(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "docket.db")
	old, err := sqlite.OpenOld(ctx, path)
	if err != nil {
		t.Fatalf("OpenOld: %v", err)
	}
	big := json.RawMessage(`"` + strings.Repeat("b", store.BlobThreshold) + `"`) // kept as a blob
	want := map[string]store.Head{}
	for _, l := range []struct {
		project string
		events  int
	}{{"p1", 5}, {"p2", 3}, {"p1x", 1}} {
		for i := 1; i <= l.events; i++ {
			err := old.Update(ctx, func(tx store.Tx) error {
				data := json.RawMessage(`{}`)
				if i == 4 {
					data = big
				}
				e, err := tx.Append(ctx, store.NewEvent{Project: l.project, ID: fmt.Sprintf("%s-%d", l.project, i), Type: "t", At: t0, Data: data})
				want[l.project] = store.Head{Seq: e.Seq, Hash: e.Hash}
				return err
			})
			if err != nil {
				t.Fatalf("append to %s before the upgrade: %v", l.project, err)
			}
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path)
	for project, h := range want {
		if got, err := s.Verify(ctx, project); err != nil || got != h {
			t.Errorf("Verify(%s) after the upgrade = %v, %v; want %v", project, got, err, h)
		}
		if got, err := s.Head(ctx, project); err != nil || got != h {
			t.Errorf("Head(%s) after the upgrade = %v, %v; want %v", project, got, err, h)
		}
	}
	appendOne := func(id string) (store.Event, error) {
		var e store.Event
		err := s.Update(ctx, func(tx store.Tx) (err error) {
			e, err = tx.Append(ctx, store.NewEvent{Project: "p1", ID: id, Type: "t", At: t0, Data: json.RawMessage(`{}`)})
			return err
		})
		return e, err
	}
	if _, err := appendOne("p1-2"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("append of an id used before the upgrade = %v, want %v", err, store.ErrConflict)
	}
	e, err := appendOne("p1-6")
	if err != nil || e.Seq != 6 || e.PrevHash != want["p1"].Hash {
		t.Fatalf("append after the upgrade = seq %d prev %s, %v; want seq 6 prev %s", e.Seq, e.PrevHash, err, want["p1"].Hash)
	}
	if got, err := s.Verify(ctx, "p1"); err != nil || got != (store.Head{Seq: 6, Hash: e.Hash}) {
		t.Errorf("Verify(p1) after an append = %v, %v; want seq 6", got, err)
	}
	evs, err := s.Events(ctx, "p1", 0, 100)
	if err != nil || len(evs) != 6 || string(evs[3].Data) != string(big) {
		t.Errorf("Events(p1) after the upgrade = %d events, %v; want 6, the fourth its blob", len(evs), err)
	}

	if err := sqlite.ExecRaw(ctx, s, true, `DELETE FROM events WHERE project = 'p2' AND seq = 3`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Verify(ctx, "p2")
	if ce, ok := errors.AsType[*store.ChainError](err); !ok || ce.Field != "head" || ce.Seq != 3 {
		t.Errorf("Verify(p2) with its last event removed = %v, want a head error at seq 3", err)
	}
}

// TestUpdate_HeadRowsApart appends to logs whose names are each other's prefix, one of
// them ending in the NUL byte that a head row's key adds to its project: each log keeps
// its own events and head, and no read of one shows another's events or a head row.
func TestUpdate_HeadRowsApart(t *testing.T) {
	ctx := t.Context()
	s := openAt(t, filepath.Join(t.TempDir(), "docket.db"))
	projects := []string{"p", "p\x00", "p\x00\x00", "p1", ""}
	counts := map[string]int{"p": 3, "p\x00": 2, "p\x00\x00": 1, "p1": 4}
	heads := map[string]store.Head{}
	for round := range 4 {
		for _, p := range projects[:4] {
			if round >= counts[p] {
				continue
			}
			err := s.Update(ctx, func(tx store.Tx) error {
				e, err := tx.Append(ctx, store.NewEvent{Project: p, Type: "t", At: t0, Data: json.RawMessage(`{}`)})
				heads[p] = store.Head{Seq: e.Seq, Hash: e.Hash}
				return err
			})
			if err != nil {
				t.Fatalf("append to %q: %v", p, err)
			}
		}
	}
	for _, p := range projects {
		evs, err := s.Events(ctx, p, 0, 100)
		if err != nil || len(evs) != counts[p] {
			t.Errorf("Events(%q) = %d events, %v; want %d", p, len(evs), err, counts[p])
		}
		for _, e := range evs {
			if e.Project != p || e.Seq < 1 {
				t.Errorf("Events(%q) holds event %q seq %d", p, e.Project, e.Seq)
			}
		}
		if got, err := s.Verify(ctx, p); err != nil || got != heads[p] {
			t.Errorf("Verify(%q) = %v, %v; want %v", p, got, err, heads[p])
		}
	}
}

// TestVerify_HeadMovedBack moves a log's head back one event with SQL on event_heads, as
// the authority's tamper tests and an operator's repair do: the view moves the head row,
// and Verify finds the head short of the chain.
func TestVerify_HeadMovedBack(t *testing.T) {
	ctx := t.Context()
	s := openAt(t, filepath.Join(t.TempDir(), "docket.db"))
	var evs []store.Event
	for i := range 3 {
		err := s.Update(ctx, func(tx store.Tx) error {
			e, err := tx.Append(ctx, store.NewEvent{Project: "p1", ID: fmt.Sprint(i), Type: "t", At: t0, Data: json.RawMessage(`{}`)})
			evs = append(evs, e)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := sqlite.ExecRaw(ctx, s, false, `UPDATE event_heads SET seq = 2, hash = $1 WHERE project = 'p1'`, evs[1].Hash[:]); err != nil {
		t.Fatalf("move the head back: %v", err)
	}
	if h, err := s.Head(ctx, "p1"); err != nil || h != (store.Head{Seq: 2, Hash: evs[1].Hash}) {
		t.Errorf("Head after the move = %v, %v; want seq 2", h, err)
	}
	_, err := s.Verify(ctx, "p1")
	if ce, ok := errors.AsType[*store.ChainError](err); !ok || ce.Field != "head" || ce.Seq != 2 {
		t.Errorf("Verify with the head moved back = %v, want a head error at seq 2", err)
	}
}
