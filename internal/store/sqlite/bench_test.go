package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storetest"
)

// BenchmarkAppend measures event appends (WAL, synchronous=NORMAL) against the driver's
// raw single-row INSERT into a plain table on the same file, alternating transactions;
// pct_of_raw is the ratio (target ≥ 70).
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name  string
		perTx int
	}{{"single", 1}, {"batch100", 100}} {
		b.Run(bc.name, func(b *testing.B) {
			s := openAt(b, filepath.Join(b.TempDir(), "docket.db"))
			storetest.BenchAppend(b, s, bc.perTx, rawInserter(b, s))
		})
	}
}

// BenchmarkPutNodes measures a Board change of ten nodes written with one PutNodes
// against the same written with a PutNode each, alternating transactions.
func BenchmarkPutNodes(b *testing.B) {
	storetest.BenchPutNodes(b, openAt(b, filepath.Join(b.TempDir(), "docket.db")), 10)
}

// BenchmarkEventRow measures the floor under BenchmarkAppend: the events row alone,
// INSERTed with one prepared statement and precomputed hashes into the store's events
// table (its primary key and its unique (project, id) index), with no hashing, no head and
// no store code, against the same raw baseline. Append cannot beat this figure.
func BenchmarkEventRow(b *testing.B) {
	for _, bc := range []struct {
		name  string
		perTx int
	}{{"single", 1}, {"batch100", 100}} {
		b.Run(bc.name, func(b *testing.B) {
			s := openAt(b, filepath.Join(b.TempDir(), "docket.db"))
			benchAgainst(b, eventRowInserter(b, s), rawInserter(b, s), bc.perTx)
		})
	}
}

// eventRowInserter inserts event rows as Append would (IDs as BenchAppend names them).
func eventRowInserter(b *testing.B, s *sqlite.Store) storetest.RawFunc {
	b.Helper()
	ins, err := sqlite.RawStmt(context.Background(), s, `INSERT INTO events (project, seq, id, type, at, actor, data, data_hash, prev_hash, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`)
	if err != nil {
		b.Fatalf("prepare event insert: %v", err)
	}
	b.Cleanup(func() { _ = ins.Close() })
	hash := sha256.Sum256(storetest.BenchData)
	n := 0
	return func(ctx context.Context, rows int) error {
		return sqlite.RawTx(ctx, s, func() error {
			for range rows {
				n++
				if _, err := ins.ExecContext(ctx, "bench", n, fmt.Sprintf("e%d", n), "board.asserted", n, "agent:calc",
					storetest.BenchData, hash[:], hash[:], hash[:]); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// benchAgainst runs f and raw alternately, perTx rows a transaction each, and reports f's
// rate as a percentage of raw's, as storetest.BenchAppend does.
func benchAgainst(b *testing.B, f, raw storetest.RawFunc, perTx int) {
	ctx := context.Background()
	var inF, inRaw time.Duration
	for b.Loop() {
		start := time.Now()
		if err := f(ctx, perTx); err != nil {
			b.Fatalf("insert: %v", err)
		}
		mid := time.Now()
		if err := raw(ctx, perTx); err != nil {
			b.Fatalf("raw insert: %v", err)
		}
		inF += mid.Sub(start)
		inRaw += time.Since(mid)
	}
	b.ReportMetric(100*inRaw.Seconds()/inF.Seconds(), "pct_of_raw")
}

// rawInserter returns the baseline: rows shaped like events (a precomputed hash) inserted
// into a plain table with one prepared statement, in transactions begun and committed as
// Update does (as the SQLite floor program measures it).
func rawInserter(b *testing.B, s *sqlite.Store) storetest.RawFunc {
	b.Helper()
	ctx := context.Background()
	if err := sqlite.ExecRaw(ctx, s, false, `CREATE TABLE raw_events (seq INTEGER PRIMARY KEY,
		project TEXT NOT NULL, type TEXT NOT NULL, at INTEGER NOT NULL, data BLOB NOT NULL, hash BLOB NOT NULL)`); err != nil {
		b.Fatalf("create raw table: %v", err)
	}
	ins, err := sqlite.RawStmt(ctx, s, `INSERT INTO raw_events (seq, project, type, at, data, hash)
		VALUES ($1, $2, $3, $4, $5, $6)`)
	if err != nil {
		b.Fatalf("prepare raw insert: %v", err)
	}
	b.Cleanup(func() { _ = ins.Close() })
	hash := sha256.Sum256(storetest.BenchData)
	n := 0
	return func(ctx context.Context, rows int) error {
		return sqlite.RawTx(ctx, s, func() error {
			for range rows {
				n++
				if _, err := ins.ExecContext(ctx, n, "bench", "board.asserted", n, storetest.BenchData, hash[:]); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// BenchmarkAppendWriters measures one-event Updates from 1 and 8 writers at once against
// the raw single-row commit rate on the same file (group commit: target ≥ 100% with 8
// writers, ≥ 60% with one).
func BenchmarkAppendWriters(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := openAt(b, filepath.Join(b.TempDir(), "docket.db"))
			storetest.BenchAppendWriters(b, s, writers, rawInserter(b, s))
		})
	}
}

// BenchmarkAppendWritersFloor is BenchmarkAppendWriters against the SQLite floor program's
// own commits instead of the raw baseline: after each round of Updates, as many of the
// floor's single-row transactions (floorInserter) on a file of their own, so the ratio to
// the floor is measured in one run, the noise of a shared machine falling on both alike.
// raw_tx/s is the floor's rate here, and pct_of_raw the store's rate as a percentage of it
// (targets: ≥ 60 with one writer, ≥ 100 with 8).
func BenchmarkAppendWritersFloor(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := openAt(b, filepath.Join(b.TempDir(), "docket.db"))
			storetest.BenchAppendWriters(b, s, writers, floorInserter(b, filepath.Join(b.TempDir(), "floor.db")))
		})
	}
}

// floorInserter returns the loop of the SQLite floor program (sqlite-floor, single mode) on
// a database of its own at path: its schema, its connection settings (WAL,
// synchronous=NORMAL, SQLite's default checkpoints, BEGIN IMMEDIATE), its statement and
// payload, each row hash-chained to the one before.
func floorInserter(b *testing.B, path string) storetest.RawFunc {
	b.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		b.Fatalf("open floor database: %v", err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { _ = db.Close() })
	if _, err := db.ExecContext(ctx, `CREATE TABLE events (seq INTEGER PRIMARY KEY, case_id TEXT NOT NULL,
		kind TEXT NOT NULL, at INTEGER NOT NULL, payload BLOB NOT NULL, hash BLOB NOT NULL)`); err != nil {
		b.Fatalf("create floor table: %v", err)
	}
	ins, err := db.PrepareContext(ctx, "INSERT INTO events(case_id, kind, at, payload, hash) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		b.Fatalf("prepare floor insert: %v", err)
	}
	b.Cleanup(func() { _ = ins.Close() })
	payload := []byte(`{"action":"http.get@1","args":{"url":"http://127.0.0.1:8080/orders/42"},"grant":"g-0000000000000000","lease":"l-0000000000000000","worker":"w-1","attempt":1}`)
	prev := sha256.Sum256(nil)
	seq := 0
	return func(ctx context.Context, rows int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		stmt := tx.StmtContext(ctx, ins)
		for range rows {
			seq++
			h := sha256.New()
			h.Write(prev[:])
			h.Write(payload)
			copy(prev[:], h.Sum(nil))
			if _, err := stmt.ExecContext(ctx, "case-1", event.ActionCompleted, seq, payload, prev[:]); err != nil {
				return errors.Join(err, tx.Rollback())
			}
		}
		return tx.Commit()
	}
}

// BenchmarkHead measures a read of a log's head, as a request makes it: with a context
// that can end (an HTTP request's). Background is the same read with one that cannot.
func BenchmarkHead(b *testing.B) {
	s := openAt(b, filepath.Join(b.TempDir(), "docket.db"))
	if err := s.Update(b.Context(), func(tx store.Tx) error {
		_, err := tx.Append(b.Context(), store.NewEvent{Project: "p1", Type: "t", At: time.Unix(0, 0).UTC(), Data: json.RawMessage(`{}`)})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"cancelable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := bc.ctx()
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Head(ctx, "p1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
