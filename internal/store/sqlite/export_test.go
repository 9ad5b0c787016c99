package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"testing/fstest"

	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/tables"
)

// ExecRaw runs query on s's writer connection, bypassing the store, for tests that forge
// tampering. With guardsOff it first drops the triggers that make events and releases
// immutable, for good.
func ExecRaw(ctx context.Context, s *Store, guardsOff bool, query string, args ...any) error {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	s.heads.Reset() // the query may change the logs behind the Store's back
	if guardsOff {
		for _, trig := range []string{"events_no_update", "events_no_delete", "releases_no_update"} {
			if _, err := s.wconn.ExecContext(ctx, `DROP TRIGGER IF EXISTS `+trig); err != nil {
				return err
			}
		}
	}
	_, err := s.wconn.ExecContext(ctx, query, args...)
	return conn{}.mapErr(err)
}

// RawStmt prepares query on s's writer connection, for the raw INSERT baseline of the
// benchmarks.
func RawStmt(ctx context.Context, s *Store, query string) (*sql.Stmt, error) {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	return s.wconn.PrepareContext(ctx, query)
}

// RawTx runs fn in a transaction on s's writer connection, begun and committed as Update
// does it, but with nothing of the store in between: the baseline of the benchmarks.
func RawTx(ctx context.Context, s *Store, fn func() error) error {
	return s.write(ctx, func(conn) error { return fn() }, nil)
}

// OldStore writes a log as the store did before migration 0051 moved the heads into the
// events table: on a database migrated only up to it, through the shared write path and
// Batch.Finish, which writes event_heads. Tests use it to make the data directory of an
// earlier build and upgrade it.
type OldStore struct {
	db    *sql.DB
	group tables.Group
}

// OpenOld creates the database at path with the migrations numbered below 51.
func OpenOld(ctx context.Context, path string) (*OldStore, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	old := fstest.MapFS{}
	names, err := fs.Glob(sub, "*.sql")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if name >= "0051" {
			continue
		}
		b, err := fs.ReadFile(sub, name)
		if err != nil {
			return nil, err
		}
		old[name] = &fstest.MapFile{Data: b}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	o := &OldStore{db: db}
	if err := o.tx(ctx, func(c conn) error { return tables.Migrate(ctx, c, old) }); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return o, nil
}

func (o *OldStore) tx(ctx context.Context, fn func(c conn) error) error {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(conn{q: tx}); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// Update commits fn as the store before migration 0051 did: the events, then the heads
// written to event_heads by Batch.Finish.
func (o *OldStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return o.group.Do(ctx, fn, func(b *tables.Batch) {
		b.Settle(o.tx(ctx, func(c conn) error {
			ok, err := b.Run(ctx, c, func() *tables.Tx { return tables.NewTx(c, true) })
			if err != nil || !ok {
				return errors.Join(err, errors.New("nothing to commit"))
			}
			return b.Finish(ctx, c)
		}))
	})
}

// Close closes the database.
func (o *OldStore) Close() error { return o.db.Close() }

// WaitReads returns how many heads Wait read so far.
func (s *Store) WaitReads() int64 { return s.waitReads.Load() }

// PollInterval is how often Wait reads the head whatever it knows.
const PollInterval = pollInterval
