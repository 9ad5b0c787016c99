package sqlite_test

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"

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

// rawInserter returns the baseline: rows shaped like events (a precomputed hash) inserted
// into a plain table with one prepared statement, in transactions begun and committed as
// Update does (as /work/shared/floors/sqlite-floor measures it).
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
