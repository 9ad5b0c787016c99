// Package dbquery provides the db-query and db-exec-fenced adapters: one SQL statement
// from the Tool's template, with {param} placeholders bound as driver parameters, against
// a SQLite or PostgreSQL Source.
package dbquery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Defaults, used when a Tool's fence leaves them unset.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxBytes = 4 << 20 // cap on the text of all returned rows, bytes
)

// Adapter runs db-query and db-exec-fenced Tools; register it under both names. It keeps
// one connection pool per Source and is safe for concurrent use. Close it when done.
//
// A db-query Tool runs exactly one SELECT in a read-only transaction. A db-exec-fenced
// Tool runs exactly one statement in a transaction; DROP, TRUNCATE, ALTER and DELETE or
// UPDATE without WHERE are refused unless the Tool's fence.allow names their class. SQL
// comes only from the Tool's entry; arguments are bound as driver parameters and never
// written into it. A failed commit is reported as an unknown effect.
type Adapter struct {
	mu  sync.Mutex         // guards dbs
	dbs map[string]*sql.DB // by Source name
}

var (
	_ worker.Adapter     = (*Adapter)(nil)
	_ worker.ToolChecker = (*Adapter)(nil)
)

// CheckTool parses the Tool's SQL for both dialects and checks its class and that every
// placeholder is a declared parameter.
func (a *Adapter) CheckTool(id contract.ToolID, t worker.Tool) error {
	for _, d := range []dialect{dialectSQLite, dialectPostgres} {
		if _, err := prepare(id, t, d); err != nil {
			return err
		}
	}
	return nil
}

func prepare(id contract.ToolID, t worker.Tool, d dialect) (template, error) {
	tpl, err := parseTemplate(t.Entry, d)
	if err != nil {
		return template{}, err
	}
	switch t.Adapter {
	case worker.AdapterDBQuery:
		err = tpl.checkQuery()
	case worker.AdapterDBExecFenced:
		var allow []string
		if t.Fence != nil {
			allow = t.Fence.Allow
		}
		err = tpl.checkExec(allow)
	default:
		err = contract.Errorf(contract.CodeManifestInvalid, "tool %s uses adapter %s, not db-query or db-exec-fenced.", id, t.Adapter)
	}
	if err != nil {
		return template{}, err
	}
	for _, p := range tpl.params {
		if _, ok := t.Params[p]; !ok {
			return template{}, contract.Errorf(contract.CodeManifestInvalid, "tool %s uses {%s} in its SQL but declares no such parameter; add it to params.", id, p)
		}
	}
	return tpl, nil
}

// Close closes every pool.
func (a *Adapter) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for name, db := range a.dbs {
		errs = append(errs, db.Close())
		delete(a.dbs, name)
	}
	return errors.Join(errs...)
}

// Execute runs the Tool's statement once.
func (a *Adapter) Execute(ctx context.Context, c worker.Call) (worker.Outcome, error) {
	if c.Source == nil || c.Source.Type != "db" {
		return worker.Refuse(contract.Errorf(contract.CodeSourceTypeMatch, "tool %s runs against a db Source; name one.", c.Tool))
	}
	db, d, err := a.open(c.Source)
	if err != nil {
		return worker.Refuse(err)
	}
	tpl, err := prepare(c.Tool, c.Def, d)
	if err != nil {
		return worker.Refuse(err)
	}
	args := make([]any, len(tpl.params))
	for i, p := range tpl.params {
		v, ok := c.Args[p]
		if !ok {
			return worker.Refuse(contract.Errorf(contract.CodeToolArgs, "tool %s needs argument %s for its SQL.", c.Tool, p))
		}
		args[i] = driverValue(v)
	}
	timeout, maxBytes := DefaultTimeout, int64(DefaultMaxBytes)
	if f := c.Def.Fence; f != nil {
		if f.TimeoutMs > 0 {
			timeout = time.Duration(f.TimeoutMs) * time.Millisecond
		}
		if f.MaxBytes > 0 {
			maxBytes = f.MaxBytes
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if c.Def.Adapter == worker.AdapterDBQuery {
		rows, err := query(ctx, db, tpl.sql, args, maxBytes)
		if err != nil {
			return worker.Refuse(fmt.Errorf("query %s: %w", c.Tool, err))
		}
		return worker.OK(rows...)
	}
	return exec(ctx, db, c.Tool, tpl.sql, args)
}

// open returns the pool of src, opening it on first use.
func (a *Adapter) open(src *worker.Source) (*sql.DB, dialect, error) {
	dsn := src.DSN.Reveal()
	driver, name, d := "pgx", dsn, dialectPostgres
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		driver, name, d = "sqlite", path, dialectSQLite
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if db, ok := a.dbs[src.Name]; ok {
		return db, d, nil
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		// The driver's message may quote the DSN; keep it for the log only.
		return nil, d, &contract.Error{Code: contract.CodeToolFailed, Teaching: fmt.Sprintf("source %s could not be opened; check its dsn in the vault.", src.Name), Err: err}
	}
	if a.dbs == nil {
		a.dbs = map[string]*sql.DB{}
	}
	a.dbs[src.Name] = db
	return db, d, nil
}

func driverValue(v contract.Value) any {
	switch v.Kind() {
	case contract.ValueInt:
		return v.Int()
	case contract.ValueFloat:
		return v.Float()
	case contract.ValueBool:
		return v.Bool()
	}
	return v.Str()
}

func query(ctx context.Context, db *sql.DB, q string, args []any, maxBytes int64) ([]contract.Args, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // a read-only transaction has nothing to commit
	rs, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	out := []contract.Args{}
	var size int64
	for rs.Next() {
		if len(out) == worker.MaxRows {
			return nil, contract.Errorf(contract.CodeOutputTooBig, "the query returned over %d rows; add a LIMIT or a narrower WHERE.", worker.MaxRows)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := contract.Args{}
		for i, col := range cols {
			v, keep, n, err := column(vals[i])
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", col, err)
			}
			if size += n; size > maxBytes {
				return nil, contract.Errorf(contract.CodeOutputTooBig, "the query returned over %d bytes; select fewer columns or rows.", maxBytes)
			}
			if keep {
				row[col] = v
			}
		}
		out = append(out, row)
	}
	return out, rs.Err()
}

// column converts one scanned value; NULL is left out, and the size counted is its text.
func column(x any) (contract.Value, bool, int64, error) {
	switch v := x.(type) {
	case nil:
		return contract.Value{}, false, 0, nil
	case int64:
		if v > contract.MaxExactInt || v < -contract.MaxExactInt {
			s := fmt.Sprint(v) // too large to be exact as a number: its decimal text
			return contract.StringValue(s), true, int64(len(s)), nil
		}
		val, err := contract.IntValue(v)
		return val, true, 8, err
	case float64:
		val, err := contract.FloatValue(v)
		return val, true, 8, err
	case bool:
		return contract.BoolValue(v), true, 1, nil
	case string:
		return contract.StringValue(v), true, int64(len(v)), nil
	case []byte:
		if !utf8.Valid(v) {
			return contract.Value{}, false, 0, contract.Errorf(contract.CodeToolArgs, "a column is binary; select it as hex or base64 text.")
		}
		return contract.StringValue(string(v)), true, int64(len(v)), nil
	case time.Time:
		s := v.UTC().Format(time.RFC3339Nano)
		return contract.StringValue(s), true, int64(len(s)), nil
	default:
		s := fmt.Sprint(v)
		return contract.StringValue(s), true, int64(len(s)), nil
	}
}

// exec runs one statement in a transaction. Before the commit nothing is visible, so a
// failure is a refusal; a failed commit may or may not have landed, so it is unknown.
func exec(ctx context.Context, db *sql.DB, id contract.ToolID, q string, args []any) (worker.Outcome, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return worker.Refuse(fmt.Errorf("exec %s: begin: %w", id, err))
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		tx.Rollback()
		return worker.Refuse(fmt.Errorf("exec %s: %w", id, err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		tx.Rollback()
		return worker.Refuse(fmt.Errorf("exec %s: rows affected: %w", id, err))
	}
	if err := tx.Commit(); err != nil {
		return worker.Unknown(fmt.Errorf("exec %s: commit: %w", id, err))
	}
	affected, err := contract.IntValue(n)
	if err != nil {
		return worker.OK()
	}
	return worker.OK(contract.Args{"rowsAffected": affected})
}
