package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// driverStmts runs Execs on the writer connection as statements prepared once on its
// driver connection, without database/sql in between: appends are the store's hottest
// path, and database/sql's per-call locking, argument conversion and result wrapping
// cost more than a tenth of an INSERT. Arguments are converted exactly as database/sql
// converts them for a driver without a NamedValueChecker (modernc's has none). Only the
// holder of the Store's writing token may use it.
type driverStmts struct {
	conn *sql.Conn
	m    map[string]driver.Stmt
	args []driver.NamedValue // reused by every exec
}

// exec runs query with args and returns the number of rows affected.
func (d *driverStmts) exec(ctx context.Context, query string, args []any) (int64, error) {
	var n int64
	err := d.conn.Raw(func(dc any) error {
		st, err := d.stmt(ctx, dc, query)
		if err != nil {
			return err
		}
		ex, ok := st.(driver.StmtExecContext)
		if !ok {
			return fmt.Errorf("driver statement %T cannot exec with a context", st)
		}
		nv := d.args[:0]
		for i, a := range args {
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return fmt.Errorf("argument $%d: %w", i+1, err)
			}
			nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: v})
		}
		d.args = nv
		res, err := ex.ExecContext(ctx, nv)
		clear(nv) // keep no caller's data alive
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

func (d *driverStmts) stmt(ctx context.Context, dc any, query string) (driver.Stmt, error) {
	if st, ok := d.m[query]; ok {
		return st, nil
	}
	p, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("driver connection %T cannot prepare with a context", dc)
	}
	st, err := p.PrepareContext(ctx, positional(query))
	if err != nil {
		return nil, err
	}
	if d.m == nil {
		d.m = make(map[string]driver.Stmt)
	}
	d.m[query] = st
	return st, nil
}

// close closes every statement and returns their errors.
func (d *driverStmts) close() error {
	if len(d.m) == 0 { // also when Open failed before conn was set
		return nil
	}
	var errs []error
	err := d.conn.Raw(func(any) error {
		for _, st := range d.m {
			errs = append(errs, st.Close())
		}
		return nil
	})
	d.m = nil
	return errors.Join(append(errs, err)...)
}
