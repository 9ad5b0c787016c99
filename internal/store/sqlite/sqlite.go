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
	"strings"
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
// makes for many times the commit rate of FULL (the SQLite floor measures both).
const (
	busyTimeout  = 5 * time.Second // how long a writer waits for another process's lock
	pollInterval = time.Second     // how often Wait rereads the head for other processes' appends
)

// Store is a store.Store on one SQLite file. It is safe for concurrent use.
//
// Writes go through one connection held for the Store's life, with statements prepared
// on it once: SQLite has one writer anyway, queuing in Go is cheaper than busy retries,
// and parsing would otherwise cost more than running the store's small statements.
type Store struct {
	tables.Reader // reads on the reader pool

	path   string
	writer *sql.DB // the pool of one connection that wconn holds
	reader *sql.DB
	rstmts stmtCache // statements prepared on reader
	closed atomic.Bool
	notify tables.Notifier
	// waitReads counts the heads Wait read, which tests check (tables.Notifier.Wait
	// reads one only when it can show something new).
	waitReads atomic.Int64

	// writing holds one token while a write, the migration or Close uses wconn; a
	// channel rather than a mutex so that a writer waiting its turn can give up when its
	// context ends. Never closed. Take it before wstmts.mu.
	writing chan struct{}
	wconn   *sql.Conn
	wstmts  stmtCache        // statements prepared on wconn
	wexec   driverStmts      // Execs prepared on wconn's driver connection
	heads   tables.HeadCache // heads this Store committed; guarded by writing
	group   tables.Group     // the Updates waiting to be committed together
}

var _ store.Store = (*Store)(nil)

// Open opens (creating it with mode 0600 if needed) the SQLite database at path and
// applies the migrations it lacks.
func Open(ctx context.Context, path string) (*Store, error) {
	s, err := open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

func open(ctx context.Context, path string) (*Store, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	s := &Store{path: path, writing: make(chan struct{}, 1)}
	base := (&url.URL{Scheme: "file", Path: path}).String()
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)", busyTimeout.Milliseconds())
	if s.writer, err = sql.Open("sqlite", base+"?"+pragmas+"&_pragma=journal_mode(WAL)"); err != nil {
		return nil, err
	}
	s.writer.SetMaxOpenConns(1)
	if s.wconn, err = s.writer.Conn(ctx); err != nil {
		_ = s.writer.Close()
		return nil, err
	}
	if s.reader, err = sql.Open("sqlite", base+"?"+pragmas+"&_pragma=query_only(1)"); err != nil {
		_ = s.Close()
		return nil, err
	}
	// Every reader stays open: a connection closed as idle takes its prepared statements
	// with it, and the next one prepares them again (database/sql keeps two idle by
	// default; with held calls reading at once, that reopened connections all the time).
	readers := max(4, runtime.GOMAXPROCS(0))
	s.reader.SetMaxOpenConns(readers)
	s.reader.SetMaxIdleConns(readers)
	s.wstmts.db, s.rstmts.db, s.wexec.conn = s.wconn, s.reader, s.wconn
	s.Reader = tables.Reader{C: conn{q: s.reader, stmts: &s.rstmts, closed: &s.closed}}
	if err := s.migrate(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	return s.write(ctx, func(c conn) error { return tables.Migrate(ctx, c, sub) }, nil)
}

// write runs fn between BEGIN IMMEDIATE and COMMIT on the writer connection, then
// committed (when not nil) while it still holds the writer. BEGIN IMMEDIATE takes the
// write lock at once, so a transaction never fails halfway to upgrade a read lock when
// another process writes the file. BEGIN, COMMIT and ROLLBACK are statements prepared once, like
// the store's own: a single-event Update would otherwise parse two statements for its one
// INSERT.
func (s *Store) write(ctx context.Context, fn func(c conn) error, committed func()) (err error) {
	select {
	case s.writing <- struct{}{}:
		defer func() { <-s.writing }()
	case <-ctx.Done():
		return fmt.Errorf("wait for the writer: %w", context.Cause(ctx))
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	c := conn{q: s.wconn, stmts: &s.wstmts, exec: &s.wexec, closed: &s.closed}
	if _, err := s.wexec.exec(ctx, "BEGIN IMMEDIATE", nil); err != nil {
		return fmt.Errorf("begin: %w", c.mapErr(err))
	}
	done := false
	defer func() { // on an error, and when fn panics
		if done {
			return
		}
		// A rollback that fails leaves the writer inside the transaction, and every later
		// BEGIN fails: the caller hears why with its own error.
		if _, rerr := s.wexec.exec(context.WithoutCancel(ctx), "ROLLBACK", nil); rerr != nil {
			err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
	}()
	if err := fn(c); err != nil {
		return err
	}
	if _, err := s.wexec.exec(ctx, "COMMIT", nil); err != nil {
		return fmt.Errorf("commit: %w", c.mapErr(err))
	}
	done = true
	if committed != nil {
		committed()
	}
	return nil
}

// Path returns the path of the database file.
func (s *Store) Path() string { return s.path }

// Update implements [store.Store.Update]. Transactions queue for the one writer
// connection, so they never interleave, here or with another process; the Updates that
// queue while one commits are committed together in one transaction (tables.Group: each
// in a savepoint, each returning only after that commit).
//
// Each log's next seq and prevHash come from the head this Store last committed for it
// (tables.HeadCache), or else from the log's head row (event_heads, a view of the head
// rows in events; see writeHeads); never from MAX(seq)+1 read outside the lock. BEGIN
// IMMEDIATE holds SQLite's one write lock, across processes too, from before the head is
// read until the commit, so no other writer can take the same seq meanwhile; and a head
// another process moved since it was cached is caught by the primary key (project, seq)
// of the next INSERT.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.group.Do(ctx, fn, s.commit)
}

// errNothing ends a batch whose every function failed: there is nothing to commit.
var errNothing = errors.New("nothing to commit")

// commit runs one batch of Updates in one transaction and settles it.
func (s *Store) commit(b *tables.Batch) {
	// The transaction serves several callers: no one caller's context may cut it short.
	ctx := context.Background()
	// A read of the head while this commit runs may see it before NotifyBatch does, and
	// must not take it for another process's (tables.Notifier.BeginCommit).
	s.notify.BeginCommit()
	defer s.notify.EndCommit()
	err := s.write(ctx, func(c conn) error {
		ok, err := b.Run(ctx, c, func() *tables.Tx { return tables.NewCachedTx(c, &s.heads) })
		if err != nil {
			return err
		}
		if !ok {
			return errNothing
		}
		return writeHeads(ctx, c, b)
	}, func() { s.heads.CommitBatch(b) })
	if errors.Is(err, errNothing) {
		err = nil // every call is settled with its own error already
	}
	if err == nil {
		s.notify.NotifyBatch(b)
	}
	b.Settle(err)
}

// headKey is the project of the head row of project's log in the events table: it sorts
// right after the log's last event (and before any other project's events), so the page
// an append changes is, but for a split, the page its head row is on (migration 0051).
func headKey(project string) string { return project + "\x00" }

// writeHeads writes the heads of the logs b appended to, in project order, as their head
// rows in events (seq 0), which event_heads shows. A log's head row exists from its first
// commit on, so it is updated in place by its key and inserted only when the update found
// none.
func writeHeads(ctx context.Context, c conn, b *tables.Batch) error {
	for _, st := range b.Heads() {
		// Heads' statements write the head of the log $1 as seq $2 and hash $3.
		if len(st.Args) != 3 {
			return fmt.Errorf("write heads: head statement with %d arguments, want 3", len(st.Args))
		}
		project, ok := st.Args[0].(string)
		if !ok {
			return fmt.Errorf("write heads: the log of a head statement is a %T, not a string", st.Args[0])
		}
		seq, hash := st.Args[1], st.Args[2]
		n, err := c.Exec(ctx, `UPDATE events SET head = $1, head_hash = $2 WHERE project = $3 AND seq = 0`, seq, hash, headKey(project))
		if err == nil && n == 0 {
			_, err = c.Exec(ctx, `INSERT INTO events (project, seq, id, type, at, actor, data, data_hash, prev_hash, hash, head, head_hash)
				VALUES ($1, 0, $2, 'docket.head', 0, '', NULL, X'', X'', X'', $3, $4)`, headKey(project), project, seq, hash)
		}
		if err != nil {
			return fmt.Errorf("write head of %s: %w", project, err)
		}
	}
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
	// No prepared statements here: preparing on the pool would wait for a second
	// connection while this transaction holds one.
	return tables.Verify(ctx, tables.Reader{C: conn{q: tx, closed: &s.closed}}, project)
}

// IntegrityCheck runs SQLite's own check of the file (PRAGMA integrity_check): a page
// or index that bytes overwritten behind the store broke is reported, which the hash
// chain cannot see when the bytes are not in an event.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	rows, err := s.reader.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check of %s: %w", s.path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("integrity check of %s: %w", s.path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check of %s: %w", s.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("integrity check of %s: %s", s.path, strings.Join(problems[:min(len(problems), 3)], "; "))
	}
	return nil
}

// Wait implements [store.Store.Wait]. Appends by this Store wake it at once; appends by
// other processes on the same file are seen within pollInterval. A wait reads the head
// at once only after a read showed another process's appends (tables.Notifier.Wait):
// until then, a Store that is the file's only writer learns every head from its commits.
func (s *Store) Wait(ctx context.Context, project string, after int64) (int64, error) {
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	return s.notify.Wait(ctx, s.waitHead, project, after, pollInterval)
}

// Head implements [store.Reader.Head] with ctx's values but not its end: the read is one
// row of an index, over before a watcher could interrupt it, and a context that can end
// (an HTTP request's) would otherwise start two watcher goroutines per read,
// database/sql's for the rows and the driver's for the statement, which cost more than
// the read itself (BenchmarkHead). A context already ended is refused before the read;
// one that ends during it is not seen, which a wait for a reader of the pool (the pool's
// reads are statements, not held transactions) or for busy_timeout (a WAL reader waits for
// no writer) bounds.
func (s *Store) Head(ctx context.Context, project string) (store.Head, error) {
	if err := ctx.Err(); err != nil {
		return store.Head{}, fmt.Errorf("read head of %s: %w", project, err)
	}
	return s.Reader.Head(context.WithoutCancel(ctx), project)
}

// waitHead reads the head for Wait, and counts the read.
func (s *Store) waitHead(ctx context.Context, project string) (store.Head, error) {
	s.waitReads.Add(1)
	return s.Head(ctx, project)
}

// Close closes the statements, the reader pool and the writer and returns their errors.
// It waits for a running Update. Calls after the first return nil.
func (s *Store) Close() error {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	if s.closed.Swap(true) {
		return nil
	}
	var errs []error
	errs = append(errs, s.wexec.close(), s.wstmts.close(), s.rstmts.close(), s.wconn.Close())
	if s.reader != nil {
		errs = append(errs, s.reader.Close())
	}
	return errors.Join(append(errs, s.writer.Close())...)
}
