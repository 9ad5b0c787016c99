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

// leasesHeadQuery reads a log's head ($1) beside a Connection's lease rows ($2) in one
// statement, so both come from one snapshot on either backend: the one row of (SELECT 1)
// keeps the head when no lease row is there, and slot -1 marks that no row was.
const leasesHeadQuery = `SELECT COALESCE(h.seq, 0), h.hash, COALESCE(l.project, ''),
	COALESCE(l.connection, ''), COALESCE(l.slot, -1), COALESCE(l.worker_id, ''),
	COALESCE(l.generation, 0), COALESCE(l.expires_at, 0)
	FROM (SELECT 1 AS one) AS one
	LEFT JOIN event_heads h ON h.project = $1
	LEFT JOIN worker_leases l ON l.connection = $2
	ORDER BY l.slot`

// LeasesHead implements [store.Reader.LeasesHead].
func (r Reader) LeasesHead(ctx context.Context, project, connection string) ([]store.Lease, store.Head, error) {
	rows, err := r.C.Query(ctx, leasesHeadQuery, project, connection)
	if err != nil {
		return nil, store.Head{}, fmt.Errorf("read leases of %s with the head of %s: %w", connection, project, err)
	}
	defer rows.Close()
	out := []store.Lease{}
	var h store.Head
	for rows.Next() {
		var l store.Lease
		var hash []byte
		var exp int64
		if err := rows.Scan(&h.Seq, &hash, &l.Project, &l.Connection, &l.Slot, &l.WorkerID, &l.Generation, &exp); err != nil {
			return nil, store.Head{}, fmt.Errorf("read leases of %s with the head of %s: %w", connection, project, err)
		}
		copy(h.Hash[:], hash)
		if l.Slot >= 0 {
			l.ExpiresAt = fromNanos(exp)
			out = append(out, l)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, store.Head{}, fmt.Errorf("read leases of %s with the head of %s: %w", connection, project, err)
	}
	return out, h, nil
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
// A transaction that excludes every other writer reads them all at once.
func (t *Tx) LockLeases(ctx context.Context, project, connection string) ([]store.Lease, error) {
	if t.exclusive {
		if err := required("lease", "a project", project, "a connection", connection); err != nil {
			return nil, err
		}
		all, err := t.Reader.leases(ctx, connection, "")
		if err != nil {
			return nil, fmt.Errorf("lock leases of %s: %w", connection, err)
		}
		return leasesIn(project, connection, all)
	}
	first, err := t.LockLease(ctx, project, connection)
	if err != nil {
		return nil, err
	}
	all, err := t.Reader.leases(ctx, connection, " FOR UPDATE")
	if err != nil {
		return nil, fmt.Errorf("lock leases of %s: %w", connection, err)
	}
	if len(all) == 0 || all[0].Slot != 0 {
		all = append([]store.Lease{first}, all...)
	}
	return leasesIn(project, connection, all)
}

// leasesIn returns the lease rows of connection read by slot, with slot 0 first (the
// never-granted one of Generation 0 when no row holds it), or [store.ErrInvalid] when a
// row is not project's.
func leasesIn(project, connection string, all []store.Lease) ([]store.Lease, error) {
	if len(all) == 0 || all[0].Slot != 0 {
		all = append([]store.Lease{{Project: project, Connection: connection, ExpiresAt: fromNanos(0)}}, all...)
	}
	for _, l := range all {
		if l.Project != project {
			return nil, fmt.Errorf("lock leases of %s: they belong to project %s, not %s: %w", connection, l.Project, project, store.ErrInvalid)
		}
	}
	return all, nil
}

// LockLeasesHead implements [store.Tx.LockLeasesHead]. On a [Pipeliner] (PostgreSQL) the
// lock of slot 0, the lock of every slot and the head read go in one round trip, run in
// that order: each statement of READ COMMITTED reads what was committed when it began, so
// the head read sees every commit of the writer that held the rows before. A Connection
// without a row yet, or a Conn that cannot pipeline, takes [Tx.LockLeases] and
// [Tx.Head] one after the other.
func (t *Tx) LockLeasesHead(ctx context.Context, project, connection string) ([]store.Lease, store.Head, error) {
	if err := required("lease", "a project", project, "a connection", connection); err != nil {
		return nil, store.Head{}, err
	}
	p, ok := t.C.(Pipeliner)
	if !t.exclusive && ok {
		all, h, locked, err := t.lockLeasesHead(ctx, p, project, connection)
		if err != nil {
			return nil, store.Head{}, fmt.Errorf("lock leases of %s: %w", connection, err)
		}
		if locked {
			all, err := leasesIn(project, connection, all)
			return all, h, err
		}
		// No row of slot 0 yet, so nothing was locked: LockLeases inserts it and locks it,
		// and the head is read after that lock.
	}
	all, err := t.LockLeases(ctx, project, connection)
	if err != nil {
		return nil, store.Head{}, err
	}
	h, err := t.Head(ctx, project)
	if err != nil {
		return nil, store.Head{}, fmt.Errorf("lock leases of %s: %w", connection, err)
	}
	return all, h, nil
}

// lockLeasesHead locks connection's lease rows and reads project's head in one pipeline;
// locked is false when there was no row of slot 0 to lock (then all and h are not to be
// used). The head is read only when the transaction does not know it already.
func (t *Tx) lockLeasesHead(ctx context.Context, p Pipeliner, project, connection string) (all []store.Lease, h store.Head, locked bool, err error) {
	known, isKnown := t.heads[project]
	if !isKnown {
		known, isKnown = t.before[project]
	}
	qs := []Statement{
		{SQL: leaseColumns + ` WHERE connection = $1 AND slot = 0 FOR UPDATE`, Args: []any{connection}},
		{SQL: leaseColumns + ` WHERE connection = $1 ORDER BY slot FOR UPDATE`, Args: []any{connection}},
	}
	if !isKnown {
		qs = append(qs, Statement{SQL: headQuery, Args: []any{project}})
	}
	h = known
	err = p.QueryPipeline(ctx, qs, func(i int, rows Rows) error {
		for rows.Next() {
			switch i {
			case 0:
				locked = true
			case 1:
				l, err := scanLease(rows)
				if err != nil {
					return err
				}
				all = append(all, l)
			case 2:
				var err error
				if h, err = scanHead(rows); err != nil {
					return err
				}
			}
		}
		return rows.Err()
	})
	return all, h, locked, err
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
