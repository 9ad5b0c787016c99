package postgres_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/storetest"
)

// BenchmarkAppend measures event appends against pgx's raw single-row INSERT into a plain
// table of the same database, alternating transactions; pct_of_raw is the ratio (target
// ≥ 70). It runs when DOCKET_TEST_POSTGRES is set.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name  string
		perTx int
	}{{"single", 1}, {"batch100", 100}} {
		b.Run(bc.name, func(b *testing.B) {
			s := openAt(b, newDB(b))
			storetest.BenchAppend(b, s, bc.perTx, rawInserter(b, s))
		})
	}
}

// BenchmarkPutNodes measures a Board change of ten nodes written with one PutNodes
// against the same written with a PutNode each, alternating transactions. It runs when
// DOCKET_TEST_POSTGRES is set.
func BenchmarkPutNodes(b *testing.B) {
	storetest.BenchPutNodes(b, openAt(b, newDB(b)), 10)
}

// rawInserter returns the baseline: rows shaped like events (a precomputed hash) inserted
// into a plain table, one INSERT each (pgx prepares and caches the statement), in plain
// transactions.
func rawInserter(b *testing.B, s *postgres.Store) storetest.RawFunc {
	b.Helper()
	ctx := context.Background()
	if err := postgres.ExecRaw(ctx, s, false, `CREATE TABLE raw_events (seq BIGINT PRIMARY KEY,
		project TEXT NOT NULL, type TEXT NOT NULL, at BIGINT NOT NULL, data BYTEA NOT NULL, hash BYTEA NOT NULL)`); err != nil {
		b.Fatalf("create raw table: %v", err)
	}
	hash := sha256.Sum256(storetest.BenchData)
	n := 0
	return func(ctx context.Context, rows int) error {
		return postgres.RawTx(ctx, s, func(tx pgx.Tx) error {
			for range rows {
				n++
				if _, err := tx.Exec(ctx, `INSERT INTO raw_events (seq, project, type, at, data, hash)
					VALUES ($1, $2, $3, $4, $5, $6)`, n, "bench", "board.asserted", n, storetest.BenchData, hash[:]); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// BenchmarkAppendWriters measures one-event Updates from 1 and 8 writers at once against
// pgx's raw single-row transactions, one after another, on the same database.
func BenchmarkAppendWriters(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := openAt(b, newDB(b))
			storetest.BenchAppendWriters(b, s, writers, rawInserter(b, s))
		})
	}
}
