package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storetest"
)

// BenchmarkAppend measures event appends (WAL, synchronous=NORMAL) next to the driver's raw
// single-row INSERT into a plain table on the same file; events/s of Append divided by
// events/s of RawInsert with the same rows per transaction is the overhead ratio.
func BenchmarkAppend(b *testing.B) {
	for _, perTx := range []int{1, 100} {
		b.Run(benchName("Append", perTx), func(b *testing.B) {
			s := benchStore(b)
			storetest.BenchAppend(b, s, perTx)
		})
		b.Run(benchName("RawInsert", perTx), func(b *testing.B) {
			s := benchStore(b)
			benchRaw(b, s, perTx)
		})
	}
}

func benchName(what string, perTx int) string {
	if perTx == 1 {
		return what + "/single"
	}
	return what + "/batch100"
}

func benchStore(b *testing.B) *sqlite.Store {
	b.Helper()
	return openAt(b, filepath.Join(b.TempDir(), "docket.db"))
}

// benchRaw inserts rows shaped like events (with a precomputed hash) into a plain table
// with plain database/sql statements: the driver's floor for the same work.
func benchRaw(b *testing.B, s *sqlite.Store, perTx int) {
	ctx := context.Background()
	if err := sqlite.ExecRaw(ctx, s, false, `CREATE TABLE raw_events (seq INTEGER PRIMARY KEY,
		project TEXT NOT NULL, type TEXT NOT NULL, at INTEGER NOT NULL, data BLOB NOT NULL, hash BLOB NOT NULL)`); err != nil {
		b.Fatalf("create raw table: %v", err)
	}
	hash := sha256.Sum256(storetest.BenchData)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		err := sqlite.RawTx(ctx, s, func(tx *sql.Tx) error {
			for range perTx {
				n++
				if _, err := tx.ExecContext(ctx, `INSERT INTO raw_events (seq, project, type, at, data, hash)
					VALUES ($1, $2, $3, $4, $5, $6)`, n, "bench", "board.asserted", n, storetest.BenchData, hash[:]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("raw insert: %v", err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}
