package sqlite_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
