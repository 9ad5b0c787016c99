package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/tables"
)

// querier is what *pgxpool.Pool, *pgxpool.Conn and pgx.Tx share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// conn adapts a pgx querier to tables.Conn and maps PostgreSQL's errors to the store
// sentinels.
//
// In a write transaction (batch set), a statement runs on the batch's context, not on the
// context of the call: the transaction holds the Updates of several callers, and pgx
// closes the connection when a statement's context ends while it runs, which would end
// the others' writes too. A function that runs is seen through (its caller's context is
// checked before it starts); the batch's context bounds its statements.
type conn struct {
	q      querier
	closed *atomic.Bool    // the Store's; set by Close
	batch  context.Context // nil, or the context every statement runs on (see Store.commit)
}

var _ tables.Conn = conn{}

// ctx returns the context a statement runs with (see conn).
func (c conn) ctx(ctx context.Context) context.Context {
	if c.batch != nil {
		return c.batch
	}
	return ctx
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(c.ctx(ctx), query, args...)
	if err != nil {
		return 0, c.mapErr(err)
	}
	return tag.RowsAffected(), nil
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) tables.Row {
	return row{r: c.q.QueryRow(c.ctx(ctx), query, args...), c: c}
}

func (c conn) Query(ctx context.Context, query string, args ...any) (tables.Rows, error) {
	r, err := c.q.Query(c.ctx(ctx), query, args...)
	if err != nil {
		return nil, c.mapErr(err)
	}
	return rows{r: r, c: c}, nil
}

// QueryPipeline implements [tables.Pipeliner] in a write transaction, whose queries
// travel in one round trip; elsewhere it runs them one after the other.
func (c conn) QueryPipeline(ctx context.Context, qs []tables.Statement, read func(i int, rows tables.Rows) error) error {
	tc, ok := c.q.(*txConn)
	if !ok {
		for i, q := range qs {
			rs, err := c.Query(ctx, q.SQL, q.Args...)
			if err != nil {
				return err
			}
			err = read(i, rs)
			rs.Close()
			if err = errors.Join(err, rs.Err()); err != nil {
				return err
			}
		}
		return nil
	}
	return c.mapErr(tc.queryPipeline(c.ctx(ctx), qs, func(i int, r pgx.Rows) error { return read(i, rows{r: r, c: c}) }))
}

var _ tables.Pipeliner = conn{}

type row struct {
	r pgx.Row
	c conn
}

func (r row) Scan(dest ...any) error { return r.c.mapErr(r.r.Scan(dest...)) }

type rows struct {
	r pgx.Rows
	c conn
}

func (r rows) Next() bool             { return r.r.Next() }
func (r rows) Scan(dest ...any) error { return r.c.mapErr(r.r.Scan(dest...)) }
func (r rows) Err() error             { return r.c.mapErr(r.r.Err()) }
func (r rows) Close()                 { r.r.Close() }

// SQLSTATE codes mapped to the store sentinels.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
	restrictViolation   = "23001" // raised by docket_refuse_change on immutable rows
	checkViolation      = "23514"
	notNullViolation    = "23502"
)

// mapErr maps a PostgreSQL error to the store sentinels, keeping the driver's message.
func (c conn) mapErr(err error) error {
	if err == nil {
		return nil
	}
	if c.closed != nil && c.closed.Load() {
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	}
	if c.batch != nil && errors.Is(context.Cause(c.batch), errBatchDeadline) {
		return fmt.Errorf("%w: %w", errBatchDeadline, err)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case uniqueViolation, restrictViolation:
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		case foreignKeyViolation:
			return fmt.Errorf("%w: a referenced record is missing: %w", store.ErrNotFound, err)
		case checkViolation, notNullViolation:
			return fmt.Errorf("%w: %w", store.ErrInvalid, err)
		}
	}
	return err
}
