// Package postgres implements store.Store on PostgreSQL through pgx: a connection pool,
// migrations under an advisory lock, and LISTEN/NOTIFY so that several `docket serve`
// instances can share one database.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/tables"
)

//go:embed migrations/*.sql
var migrations embed.FS

const (
	// migrateLock is the pg_advisory_lock key held while migrating, so that instances
	// starting together apply each migration once. The value is arbitrary but fixed.
	migrateLock int64 = 0x646f636b6574 // "docket"
	// notifyChannel is the channel the event_heads trigger notifies with a project id.
	notifyChannel = "docket_events"
	// pollInterval bounds how late Wait sees another instance's append when a
	// notification was lost (while the listener reconnects), and paces reconnects.
	pollInterval = time.Second
	// batchTimeout bounds one group commit's transaction, from taking a connection to
	// COMMIT: far above what a batch of point writes takes (milliseconds), and short
	// enough that the callers of a stuck one hear of it.
	batchTimeout = 30 * time.Second
)

// Store is a store.Store on a PostgreSQL database. It is safe for concurrent use.
type Store struct {
	tables.Reader // reads on the pool

	pool   *pgxpool.Pool
	closed atomic.Bool
	notify tables.Notifier
	// waitReads counts the heads Wait read, which tests check (tables.Notifier.Wait
	// reads one only when it can show something new).
	waitReads atomic.Int64
	group     tables.Group // the Updates waiting to be committed together
	// batchTimeout bounds each batch's transaction: the constant batchTimeout, a field so
	// that tests can shorten it. Set by Open.
	batchTimeout time.Duration

	stop context.CancelFunc // ends the listener; called by Close
	wg   sync.WaitGroup     // the listener goroutine
}

var _ store.Store = (*Store)(nil)

// Open connects to the database named by dsn (a postgres:// URL or key=value string),
// applies the migrations it lacks and starts listening for other instances' appends.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The error text of ParseConfig may hold the password; say only what failed.
		return nil, fmt.Errorf("open store: the PostgreSQL DSN does not parse")
	}
	return openConfig(ctx, cfg)
}

// openConfig is [Open] of a parsed configuration.
func openConfig(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{pool: pool, batchTimeout: batchTimeout}
	s.Reader = tables.Reader{C: conn{q: pool, closed: &s.closed}}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	// Until the listener listens, every wait reads the head (tables.Notifier.Wait).
	s.notify.SetListening(false)
	s.wg.Go(func() { s.listen(lctx) })
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer c.Release()
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock) }()
	tx, err := c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := tables.Migrate(ctx, conn{q: tx}, sub); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// listen wakes this Store's waiters when another instance moves a log's head. It runs
// until ctx ends, reconnecting after errors; Wait's polling covers the gaps.
func (s *Store) listen(ctx context.Context) {
	for {
		// An error here has no one to report to: the next attempt, or polling, recovers.
		err := s.listenOnce(ctx)
		// A notification may have been lost with the connection: waiters read the head
		// again, and at each wait, until the listener listens again.
		s.notify.SetListening(false)
		if err == nil || ctx.Err() != nil {
			return
		}
		t := time.NewTimer(pollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (s *Store) listenOnce(ctx context.Context) error {
	// A dedicated connection: a pooled one would carry the LISTEN back into the pool.
	c, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() { _ = c.Close(context.WithoutCancel(ctx)) }()
	if _, err := c.Exec(ctx, `LISTEN `+notifyChannel); err != nil {
		return err
	}
	// Every commit from now on is notified: a waiter that read the head since needs no
	// other read until a notification (or its poll) comes.
	s.notify.SetListening(true)
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.notify.Notify(n.Payload)
	}
}

// Update implements [store.Store.Update] in a READ COMMITTED transaction. The first Append
// to a project locks its head row until commit, which serializes the writers of one log
// across every instance. The Updates that queue while one commits run together in one
// transaction (tables.Group: each in a savepoint, each returning only after that commit),
// so that writers of one log share the commit's flush instead of each waiting for the
// previous one's. PostgreSQL aborts a transaction at its first failed statement: after a
// Tx write fails, fn must return an error (the batch rolls back to fn's savepoint). While
// fn waits its turn, ctx ending makes Update give up; once fn runs, its statements no
// longer end with ctx (they would close the connection the whole batch runs on), so fn
// is seen through, and a fn that checks ctx and returns its error is rolled back alone.
//
// The calls of one batch lock the heads of their logs in the order they run. Two
// instances whose batches reach two logs in opposite orders can deadlock; PostgreSQL then
// aborts one batch, whose callers get the error and nothing of theirs is kept.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.group.Do(ctx, fn, s.commit)
}

// errBatchDeadline is the cause of a batch's end at its deadline: the error a caller gets
// then says that the shared transaction ran out of time, not that its own context did.
var errBatchDeadline = errors.New("the write transaction ran past its deadline (a statement stuck on a lock, or a database not answering); nothing of it was committed")

// commit runs one batch of Updates in one transaction on a pooled connection and
// settles it.
//
// The transaction serves several callers, so no one caller's context may cut it short:
// every statement, the callers' own included, runs on the batch's context (see conn),
// which ends batchTimeout after the batch began. That deadline is what bounds a stuck
// statement (a lock another instance holds too long, a server or network that stopped
// answering): pgx then closes the connection and every caller of the batch gets the
// error; nothing of the batch commits.
func (s *Store) commit(b *tables.Batch) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), s.batchTimeout, errBatchDeadline)
	defer cancel()
	c := conn{closed: &s.closed, batch: ctx}
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		b.Settle(fmt.Errorf("begin update: %w", c.mapErr(err)))
		return
	}
	defer pc.Release()
	tc := &txConn{c: pc}
	defer tc.rollback(ctx) // a no-op after commit
	c.q = tc
	ok, err := b.Run(ctx, c, func() *tables.Tx { return tables.NewTx(c, false) })
	if err != nil || !ok {
		b.Settle(err) // nil: every call failed and is settled with its own error
		return
	}
	// The listener's notification of this commit is not another instance's: waiters need
	// not read the head for it (tables.Notifier.Expect).
	s.notify.Expect(b)
	if err := tc.commit(ctx, b.Heads()); err != nil {
		s.notify.Unexpect(b)
		b.Settle(fmt.Errorf("commit update: %w", c.mapErr(err)))
		return
	}
	s.notify.NotifyBatch(b)
	b.Settle(nil)
}

// Verify implements [store.Store.Verify] on one REPEATABLE READ snapshot.
func (s *Store) Verify(ctx context.Context, project string) (store.Head, error) {
	if s.closed.Load() {
		return store.Head{}, store.ErrClosed
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return store.Head{}, fmt.Errorf("verify %s: %w", project, conn{closed: &s.closed}.mapErr(err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	return tables.Verify(ctx, tables.Reader{C: conn{q: tx, closed: &s.closed}}, project)
}

// Wait implements [store.Store.Wait]: this Store's appends wake it at once, other
// instances' through LISTEN, and a poll every pollInterval covers lost notifications.
// While the listener listens, a wait reads the head only after a notification came
// since the last read (tables.Notifier.Wait), or at its poll.
func (s *Store) Wait(ctx context.Context, project string, after int64) (int64, error) {
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	return s.notify.Wait(ctx, s.waitHead, project, after, pollInterval)
}

// waitHead reads the head for Wait, and counts the read.
func (s *Store) waitHead(ctx context.Context, project string) (store.Head, error) {
	s.waitReads.Add(1)
	return s.Head(ctx, project)
}

// Close stops the listener and closes the pool. Calls after the first return nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stop()
	s.wg.Wait()
	s.pool.Close()
	return nil
}
