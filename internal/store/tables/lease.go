package tables

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketrun/docket/internal/store"
)

const leaseColumns = `SELECT project, connection, slot, worker_id, generation, expires_at FROM worker_leases`

func scanLease(r Row) (store.Lease, error) {
	var l store.Lease
	var exp int64
	if err := r.Scan(&l.Project, &l.Connection, &l.Slot, &l.WorkerID, &l.Generation, &exp); err != nil {
		return store.Lease{}, err
	}
	l.ExpiresAt = fromNanos(exp)
	return l, nil
}

// Lease implements [store.Reader.Lease].
func (r Reader) Lease(ctx context.Context, connection string) (store.Lease, error) {
	l, err := scanLease(r.C.QueryRow(ctx, leaseColumns+` WHERE connection = $1 ORDER BY generation DESC, slot LIMIT 1`, connection))
	if err != nil {
		return store.Lease{}, fmt.Errorf("read lease of %s: %w", connection, err)
	}
	return l, nil
}

// LockLease implements [store.Tx.LockLease]. In a transaction that excludes every other
// writer a plain read is as good as a lock. Otherwise the row is locked with SELECT …
// FOR UPDATE, which writes nothing; when there is no row yet, that locks nothing, so an
// empty row (generation 0, expired) is inserted first and locked then, and the first two
// acquisitions of a Connection queue on one row instead of both finding none.
func (t *Tx) LockLease(ctx context.Context, project, connection string) (store.Lease, error) {
	if err := required("lease", "a project", project, "a connection", connection); err != nil {
		return store.Lease{}, err
	}
	var l store.Lease
	var err error
	if t.exclusive {
		l, err = scanLease(t.C.QueryRow(ctx, leaseColumns+` WHERE connection = $1 AND slot = 0`, connection))
		if errors.Is(err, store.ErrNotFound) {
			return store.Lease{Project: project, Connection: connection, ExpiresAt: fromNanos(0)}, nil
		}
	} else {
		l, err = t.selectForUpdate(ctx, connection)
		if errors.Is(err, store.ErrNotFound) {
			if _, err = t.C.Exec(ctx, `INSERT INTO worker_leases (project, connection, slot, worker_id, generation, expires_at)
				VALUES ($1, $2, 0, '', 0, 0) ON CONFLICT (connection, slot) DO NOTHING`, project, connection); err == nil {
				l, err = t.selectForUpdate(ctx, connection)
			}
		}
	}
	if err != nil {
		return store.Lease{}, fmt.Errorf("lock lease of %s: %w", connection, err)
	}
	if l.Project != project {
		return store.Lease{}, fmt.Errorf("lock lease of %s: it belongs to project %s, not %s: %w", connection, l.Project, project, store.ErrInvalid)
	}
	return l, nil
}

func (t *Tx) selectForUpdate(ctx context.Context, connection string) (store.Lease, error) {
	return scanLease(t.C.QueryRow(ctx, leaseColumns+` WHERE connection = $1 AND slot = 0 FOR UPDATE`, connection))
}

// Leases implements [store.Reader.Leases].
func (r Reader) Leases(ctx context.Context, connection string) ([]store.Lease, error) {
	return r.leases(ctx, connection, "")
}

func (r Reader) leases(ctx context.Context, connection, suffix string) ([]store.Lease, error) {
	rows, err := r.C.Query(ctx, leaseColumns+` WHERE connection = $1 ORDER BY slot`+suffix, connection)
	if err != nil {
		return nil, fmt.Errorf("read leases of %s: %w", connection, err)
	}
	defer rows.Close()
	out := []store.Lease{}
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, fmt.Errorf("read leases of %s: %w", connection, err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read leases of %s: %w", connection, err)
	}
	return out, nil
}

// LockLeases implements [store.Tx.LockLeases]: slot 0 is locked first ([Tx.LockLease]),
// so two transactions on one Connection queue there before either locks another slot.
func (t *Tx) LockLeases(ctx context.Context, project, connection string) ([]store.Lease, error) {
	first, err := t.LockLease(ctx, project, connection)
	if err != nil {
		return nil, err
	}
	suffix := " FOR UPDATE"
	if t.exclusive {
		suffix = ""
	}
	all, err := t.Reader.leases(ctx, connection, suffix)
	if err != nil {
		return nil, fmt.Errorf("lock leases of %s: %w", connection, err)
	}
	if len(all) == 0 || all[0].Slot != 0 {
		all = append([]store.Lease{first}, all...)
	}
	for _, l := range all {
		if l.Project != project {
			return nil, fmt.Errorf("lock leases of %s: they belong to project %s, not %s: %w", connection, l.Project, project, store.ErrInvalid)
		}
	}
	return all, nil
}

// PutLease implements [store.Tx.PutLease].
func (t *Tx) PutLease(ctx context.Context, l store.Lease) error {
	if err := required("lease", "a project", l.Project, "a connection", l.Connection, "a worker id", l.WorkerID); err != nil {
		return err
	}
	if l.Generation <= 0 || l.Slot < 0 {
		return fmt.Errorf("lease of %s needs a positive generation: %w", l.Connection, store.ErrInvalid)
	}
	n, err := t.C.Exec(ctx, `INSERT INTO worker_leases (project, connection, slot, worker_id, generation, expires_at)
		VALUES ($1, $2, $6, $3, $4, $5)
		ON CONFLICT (connection, slot) DO UPDATE SET worker_id = excluded.worker_id, generation = excluded.generation,
			expires_at = excluded.expires_at
		WHERE worker_leases.project = excluded.project AND worker_leases.generation <= excluded.generation`,
		l.Project, l.Connection, l.WorkerID, l.Generation, nanos(l.ExpiresAt), l.Slot)
	if err != nil {
		return fmt.Errorf("put lease of %s: %w", l.Connection, err)
	}
	if n == 0 {
		return fmt.Errorf("put lease of %s: generation %d is below the stored one, or the lease is another project's: %w",
			l.Connection, l.Generation, store.ErrConflict)
	}
	return nil
}
