package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket/internal/store/tables"
)

// txConn runs one write transaction on a pooled connection and saves round trips, which
// dominate a short transaction: BEGIN travels in one pipeline with the transaction's first
// statement, and the final head writes with COMMIT. A transaction of one Append thus costs
// three round trips, as BEGIN, INSERT, COMMIT would. It is not safe for concurrent use.
type txConn struct {
	c     *pgxpool.Conn
	begun bool // BEGIN has been sent
}

var _ querier = (*txConn)(nil)

// batch returns a pipeline that starts with BEGIN unless BEGIN was sent already.
func (t *txConn) batch() *pgx.Batch {
	b := &pgx.Batch{}
	if !t.begun {
		b.Queue("BEGIN")
	}
	return b
}

// send sends b and reads the result of BEGIN, if b carries it.
func (t *txConn) send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	withBegin := !t.begun
	br := t.c.SendBatch(ctx, b)
	if withBegin {
		if _, err := br.Exec(); err != nil {
			return nil, errors.Join(err, br.Close())
		}
		t.begun = true
	}
	return br, nil
}

func (t *txConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.begun {
		return t.c.Exec(ctx, sql, args...)
	}
	b := t.batch()
	b.Queue(sql, args...)
	br, err := t.send(ctx, b)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (t *txConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.begun {
		return t.c.QueryRow(ctx, sql, args...)
	}
	b := t.batch()
	b.Queue(sql, args...)
	br, err := t.send(ctx, b)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

func (t *txConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.begun {
		return t.c.Query(ctx, sql, args...)
	}
	b := t.batch()
	b.Queue(sql, args...)
	br, err := t.send(ctx, b)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return batchRows{Rows: rows, br: br}, nil
}

// queryPipeline sends qs in one pipeline (after BEGIN, when BEGIN was not sent yet) and
// hands read the rows of each, in order.
func (t *txConn) queryPipeline(ctx context.Context, qs []tables.Statement, read func(i int, rows pgx.Rows) error) error {
	b := t.batch()
	for _, q := range qs {
		b.Queue(q.SQL, q.Args...)
	}
	br, err := t.send(ctx, b)
	if err != nil {
		return err
	}
	for i := range qs {
		rows, err := br.Query()
		if err == nil {
			err = read(i, rows)
			rows.Close()
			err = errors.Join(err, rows.Err())
		}
		if err != nil {
			return errors.Join(err, br.Close())
		}
	}
	return br.Close()
}

// commit sends stmts and COMMIT in one pipeline. A transaction that PostgreSQL had
// aborted answers COMMIT with ROLLBACK, which commit reports as an error.
func (t *txConn) commit(ctx context.Context, stmts []tables.Statement) error {
	if !t.begun && len(stmts) == 0 {
		return nil // nothing was sent: there is no transaction to end
	}
	b := t.batch()
	for _, st := range stmts {
		b.Queue(st.SQL, st.Args...)
	}
	b.Queue("COMMIT")
	br, err := t.send(ctx, b)
	if err != nil {
		return err
	}
	for range stmts {
		if _, err := br.Exec(); err != nil {
			return errors.Join(err, br.Close())
		}
	}
	tag, err := br.Exec()
	if err := errors.Join(err, br.Close()); err != nil {
		return err
	}
	t.begun = false
	if tag.String() != "COMMIT" {
		return fmt.Errorf("the transaction was aborted by an earlier error (COMMIT answered %s)", tag)
	}
	return nil
}

// rollback ends a begun transaction. When that fails the connection's state is unknown,
// so it is closed rather than returned to the pool.
func (t *txConn) rollback(ctx context.Context) {
	if !t.begun {
		return
	}
	if _, err := t.c.Exec(ctx, "ROLLBACK"); err != nil {
		_ = t.c.Conn().Close(ctx)
	}
	t.begun = false
}

// errRow is a Row whose pipeline failed before it was read.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// batchRow reads one row of a pipeline and then closes the pipeline.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	return errors.Join(err, r.br.Close())
}

// batchRows reads the rows of a pipeline and closes the pipeline with them.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r batchRows) Close() {
	r.Rows.Close()
	_ = r.br.Close() // an error here was already reported by Rows.Err
}
