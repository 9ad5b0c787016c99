package sqlite

import (
	"context"
	"database/sql"
)

// ExecRaw runs query on s's writer connection, bypassing the store, for tests that forge
// tampering. With guardsOff it first drops the triggers that make events and releases
// immutable, for good.
func ExecRaw(ctx context.Context, s *Store, guardsOff bool, query string, args ...any) error {
	if guardsOff {
		for _, trig := range []string{"events_no_update", "events_no_delete", "releases_no_update"} {
			if _, err := s.writer.ExecContext(ctx, `DROP TRIGGER IF EXISTS `+trig); err != nil {
				return err
			}
		}
	}
	_, err := s.writer.ExecContext(ctx, query, args...)
	return conn{}.mapErr(err)
}

// RawTx runs fn in one plain database/sql transaction on s's writer connection: the
// baseline the append benchmarks are compared with.
func RawTx(ctx context.Context, s *Store, fn func(tx *sql.Tx) error) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
