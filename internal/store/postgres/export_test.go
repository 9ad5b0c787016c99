package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ExecRaw runs query on one of s's connections, bypassing the store, for tests that forge
// tampering or measure the driver's raw insert rate. With guardsOff the statement runs
// with triggers off (session_replication_role = replica; needs a superuser), so the
// immutability triggers do not refuse it.
func ExecRaw(ctx context.Context, s *Store, guardsOff bool, query string, args ...any) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	if guardsOff {
		if _, err := c.Exec(ctx, `SET session_replication_role = replica`); err != nil {
			return err
		}
		defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), `RESET session_replication_role`) }()
	}
	_, err = c.Exec(ctx, query, args...)
	return conn{}.mapErr(err)
}

// RawTx runs fn in a plain pgx transaction on s's pool: the baseline of the benchmarks.
func RawTx(ctx context.Context, s *Store, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// SetBatchTimeout shortens the bound of s's batches, for a test of a stuck statement.
// Call it before s's first Update.
func SetBatchTimeout(s *Store, d time.Duration) { s.batchTimeout = d }

// ErrBatchDeadline is the cause a batch past its deadline is failed with.
var ErrBatchDeadline = errBatchDeadline

// OpenTraced is Open with tracer on every connection of s's pool, for a test that counts
// the statements and pipelines a call sends.
func OpenTraced(ctx context.Context, dsn string, tracer pgx.QueryTracer) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.Tracer = tracer
	return openConfig(ctx, cfg)
}

// WaitReads returns how many heads Wait read so far.
func (s *Store) WaitReads() int64 { return s.waitReads.Load() }

// PollInterval is how often Wait reads the head whatever it knows.
const PollInterval = pollInterval

// Listening reports whether s's listener listens.
func (s *Store) Listening() bool { return s.notify.Listening() }
