// Package tables implements the store.Store records and event log over Docket's SQL schema,
// which SQLite and PostgreSQL share; internal/store/sqlite and internal/store/postgres
// supply the connection, the transactions and the driver's error mapping.
package tables

import (
	"context"
	"time"
)

// Conn is one SQL connection or transaction. Queries use $1, $2… placeholders, which both
// dialects accept. Implementations map driver errors to the store sentinels: no rows to
// store.ErrNotFound, unique violations to store.ErrConflict, foreign-key violations to
// store.ErrNotFound and refused changes of immutable rows to store.ErrConflict.
type Conn interface {
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Pipeliner is a [Conn] that sends several queries in one round trip (PostgreSQL's
// pipeline). The database runs each query once the one before it ended, as if each were
// sent on its own: a query after a lock sees what was committed before that lock.
type Pipeliner interface {
	// QueryPipeline sends qs at once and hands read the rows of each, in order; an error
	// of a query, or of read, ends it with that error.
	QueryPipeline(ctx context.Context, qs []Statement, read func(i int, rows Rows) error) error
}

// Row is the result of [Conn.QueryRow].
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of [Conn.Query].
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Times are stored as BIGINT nanoseconds since 1970 UTC: exact in both dialects, and the
// same integer the event hash encodes.

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func nullNanos(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := t.UnixNano()
	return &n
}

func fromNullNanos(n *int64) *time.Time {
	if n == nil {
		return nil
	}
	t := fromNanos(*n)
	return &t
}

// list runs a query and scans every row with scan.
func list[T any](ctx context.Context, c Conn, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := c.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
