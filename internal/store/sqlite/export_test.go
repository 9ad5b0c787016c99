package sqlite

import (
	"context"
	"database/sql"
)

// ExecRaw runs query on s's writer connection, bypassing the store, for tests that forge
// tampering. With guardsOff it first drops the triggers that make events and releases
// immutable, for good.
func ExecRaw(ctx context.Context, s *Store, guardsOff bool, query string, args ...any) error {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	s.heads.Reset() // the query may change the logs behind the Store's back
	if guardsOff {
		for _, trig := range []string{"events_no_update", "events_no_delete", "releases_no_update"} {
			if _, err := s.wconn.ExecContext(ctx, `DROP TRIGGER IF EXISTS `+trig); err != nil {
				return err
			}
		}
	}
	_, err := s.wconn.ExecContext(ctx, query, args...)
	return conn{}.mapErr(err)
}

// RawStmt prepares query on s's writer connection, for the raw INSERT baseline of the
// benchmarks.
func RawStmt(ctx context.Context, s *Store, query string) (*sql.Stmt, error) {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	return s.wconn.PrepareContext(ctx, query)
}

// RawTx runs fn in a transaction on s's writer connection, begun and committed as Update
// does it, but with nothing of the store in between: the baseline of the benchmarks.
func RawTx(ctx context.Context, s *Store, fn func() error) error {
	return s.write(ctx, func(conn) error { return fn() }, nil)
}
