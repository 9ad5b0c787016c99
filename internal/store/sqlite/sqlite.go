// Package sqlite implements store.Store on a SQLite file through modernc.org/sqlite (pure
// Go): WAL journal, synchronous=NORMAL, one writer connection and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/tables"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Tuning of every Store. synchronous=NORMAL in WAL mode makes a commit durable against a
// process crash, and against power loss once the WAL is checkpointed: the trade Docket
// makes for ~10x the commit rate of FULL (see /work/shared/floors).
const (
	busyTimeout  = 5 * time.Second // how long a writer waits for another process's lock
	pollInterval = time.Second     // how often Wait rereads the head for other processes' appends
)

// Store is a store.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	tables.Reader // reads on the reader pool

	path   string
	writer *sql.DB // exactly one connection: SQLite has one writer, and queuing in Go is cheaper than busy retries
	reader *sql.DB
	closed atomic.Bool
	notify tables.Notifier
	wstmts stmtCache // statements prepared on writer
	rstmts stmtCache // statements prepared on reader
}

var _ store.Store = (*Store)(nil)

// Open opens (creating it with mode 0600 if needed) the SQLite database at path and
// applies the migrations it lacks.
func Open(ctx context.Context, path string) (*Store, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{path: path}
	base := (&url.URL{Scheme: "file", Path: path}).String()
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)", busyTimeout.Milliseconds())
	// BEGIN IMMEDIATE takes the write lock at once, so a writer never fails to upgrade a
	// read lock halfway through a transaction when another process writes.
	s.writer, err = sql.Open("sqlite", base+"?"+pragmas+"&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.writer.SetMaxOpenConns(1)
	s.writer.SetMaxIdleConns(1)
	s.writer.SetConnMaxIdleTime(0)
	s.reader, err = sql.Open("sqlite", base+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		_ = s.writer.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.reader.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	s.wstmts.db, s.rstmts.db = s.writer, s.reader
	s.Reader = tables.Reader{C: conn{q: s.reader, stmts: &s.rstmts, closed: &s.closed}}
	if err := s.migrate(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := tables.Migrate(ctx, conn{q: tx}, sub); err != nil {
		return err
	}
	return tx.Commit()
}

// Path returns the path of the database file.
func (s *Store) Path() string { return s.path }

// Update implements [store.Store.Update]. Transactions queue for the one writer
// connection and begin IMMEDIATE, so they never interleave, here or with another process.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	sqlTx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin update: %w", conn{closed: &s.closed}.mapErr(err))
	}
	defer func() { _ = sqlTx.Rollback() }() // a no-op after Commit
	tx := tables.NewTx(conn{q: sqlTx, tx: sqlTx, stmts: &s.wstmts, closed: &s.closed})
	if err := fn(tx); err != nil {
		return err
	}
	projects, err := tx.Finish(ctx)
	if err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit update: %w", conn{closed: &s.closed}.mapErr(err))
	}
	s.notify.Notify(projects...)
	return nil
}

// Verify implements [store.Store.Verify] on one read snapshot.
func (s *Store) Verify(ctx context.Context, project string) (store.Head, error) {
	if s.closed.Load() {
		return store.Head{}, store.ErrClosed
	}
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.Head{}, fmt.Errorf("verify %s: %w", project, err)
	}
	defer func() { _ = tx.Rollback() }()
	return tables.Verify(ctx, tables.Reader{C: conn{q: tx, tx: tx, stmts: &s.rstmts, closed: &s.closed}}, project)
}

// Wait implements [store.Store.Wait]. Appends by this Store wake it at once; appends by
// other processes on the same file are seen within pollInterval.
func (s *Store) Wait(ctx context.Context, project string, after int64) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.notify.Wait(ctx, s.Head, project, after, pollInterval)
}

// Close closes the reader pool and the writer and returns their errors. Calls after the
// first return nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return errors.Join(s.rstmts.close(), s.wstmts.close(), s.reader.Close(), s.writer.Close())
}
