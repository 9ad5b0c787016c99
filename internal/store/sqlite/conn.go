package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/tables"
)

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn adapts a database/sql querier to tables.Conn and maps SQLite's errors to the store
// sentinels. With stmts set, it runs each query as a statement prepared once per
// connection: parsing costs more than running the store's small statements.
//
// On the writer (exec set), a statement does not end with the context of the call: the
// transaction holds the batch of Updates of several callers, and SQLite's answer to an
// interrupted INSERT, UPDATE or DELETE in a transaction is to roll all of it back, so one
// caller giving up would fail the others' writes too. A function that runs is seen
// through (its caller's context is checked before it starts), and a statement is bounded
// by busy_timeout. It also spares each statement the driver's watcher goroutine for a
// context that can end.
type conn struct {
	q      querier
	stmts  *stmtCache   // nil: prepare every time
	exec   *driverStmts // when set, runs Exec in place of q and stmts
	closed *atomic.Bool // the Store's; set by Close
}

// ctx returns the context a statement runs with (see conn).
func (c conn) ctx(ctx context.Context) context.Context {
	if c.exec != nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

var _ tables.Conn = conn{}

// stmt returns query prepared once on the cache's database, or nil when c has no cache.
func (c conn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if c.stmts == nil {
		return nil, nil
	}
	return c.stmts.get(ctx, query)
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	ctx = c.ctx(ctx)
	if c.exec != nil {
		n, err := c.exec.exec(ctx, query, args)
		return n, c.mapErr(err)
	}
	st, err := c.stmt(ctx, query)
	if err != nil {
		return 0, c.mapErr(err)
	}
	var res sql.Result
	if st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = c.q.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, c.mapErr(err)
	}
	return res.RowsAffected()
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) tables.Row {
	ctx = c.ctx(ctx)
	st, err := c.stmt(ctx, query)
	switch {
	case err != nil:
		return errRow{c.mapErr(err)}
	case st != nil:
		return row{r: st.QueryRowContext(ctx, args...), c: c}
	}
	return row{r: c.q.QueryRowContext(ctx, query, args...), c: c}
}

func (c conn) Query(ctx context.Context, query string, args ...any) (tables.Rows, error) {
	ctx = c.ctx(ctx)
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, c.mapErr(err)
	}
	var r *sql.Rows
	if st != nil {
		r, err = st.QueryContext(ctx, args...)
	} else {
		r, err = c.q.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, c.mapErr(err)
	}
	return rows{r: r, c: c}, nil
}

// errRow is a Row whose query could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// preparer is what *sql.DB and *sql.Conn share.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtCache holds the statements prepared on one database or connection. The store's
// queries are a fixed set of constant strings, so the cache is bounded. It is safe for
// concurrent use.
type stmtCache struct {
	db preparer
	mu sync.Mutex
	m  map[string]*sql.Stmt // guarded by mu
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, positional(query))
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[query] = st
	return st, nil
}

// close closes every statement and keeps the first error.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for _, st := range c.m {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.m = nil
	return first
}

type row struct {
	r *sql.Row
	c conn
}

func (r row) Scan(dest ...any) error { return r.c.mapErr(r.r.Scan(dest...)) }

type rows struct {
	r *sql.Rows
	c conn
}

func (r rows) Next() bool             { return r.r.Next() }
func (r rows) Scan(dest ...any) error { return r.c.mapErr(r.r.Scan(dest...)) }
func (r rows) Err() error             { return r.c.mapErr(r.r.Err()) }

// Close ignores the error of closing the rows: Err reports what went wrong while reading.
func (r rows) Close() { _ = r.r.Close() }

// invalidTrigger begins the message of a trigger that refuses a row the store cannot keep
// ([store.ErrInvalid]), where a CHECK cannot say it.
const invalidTrigger = "invalid: "

// mapErr maps a SQLite error to the store sentinels, keeping the driver's message.
func (c conn) mapErr(err error) error {
	if err == nil {
		return nil
	}
	if c.closed != nil && c.closed.Load() {
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_TRIGGER:
			// A trigger that holds a rule on a row, as a CHECK would if it could read
			// another table (migration 0061), says so first; the others refuse changes of
			// immutable rows.
			if strings.Contains(se.Error(), invalidTrigger) {
				return fmt.Errorf("%w: %w", store.ErrInvalid, err)
			}
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: a referenced record is missing: %w", store.ErrNotFound, err)
		case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL, sqlite3.SQLITE_CONSTRAINT_DATATYPE:
			return fmt.Errorf("%w: %w", store.ErrInvalid, err)
		}
	}
	return err
}
