package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// The worker hop's events (package event). Acquisitions, releases, claims and
// reports live in the project's log like Operations do, for audit and so that several
// authorities over one store agree on what was claimed and reported. Who holds a
// Connection is the store's lease row ([store.Lease]): every hop call that decides on it
// locks it ([store.Tx.LockLease]) in the transaction it commits in, so a takeover and a
// claim under the old generation are serialized, never both committed; and a renewal
// moves only the row, so it appends nothing and wakes no held Poll. Each acquisition,
// claim and report has an event id derived from what it names, so the store's unique
// event id still turns a race between two instances into one winner and one
// [store.ErrConflict].

// lease is the lease of one Connection as its store row holds it.
type lease struct {
	worker  string
	gen     int64 // 0: never granted
	expires time.Time
}

func leaseOf(l store.Lease) *lease {
	return &lease{worker: l.WorkerID, gen: l.Generation, expires: l.ExpiresAt}
}

// live reports whether l still holds its Connection at now. A release sets expires to
// the epoch.
func (l *lease) live(now time.Time) bool { return l != nil && l.gen > 0 && now.Before(l.expires) }

// workLedger is the projection of one project's hop events.
type workLedger struct {
	mu      sync.Mutex      // guards the fields below; the lock order is in the package doc
	cursor  eventlog.Cursor // how far the hop ledger applied the log
	claims  map[string]event.WorkClaimedData
	reports map[string]event.WorkReportedData // work id → its report
	// gens holds the highest generation each Connection's acquisition events name. A new
	// generation exceeds it as well as the row's, so generations keep growing across the
	// upgrade that introduced the lease row, when logs held leases and no row did.
	gens map[contract.ConnectionID]int64
}

func newWorkLedger() *workLedger {
	w := &workLedger{}
	w.resetLocked()
	w.cursor.Reset = w.resetLocked
	return w
}

// resetLocked empties the ledger, for its cursor to rebuild it from the log's start when
// it applied events a failed commit lost (see [eventlog.Cursor]). w.mu must be held, or
// w not shared yet.
func (w *workLedger) resetLocked() {
	w.claims, w.reports, w.gens = map[string]event.WorkClaimedData{}, map[string]event.WorkReportedData{}, map[contract.ConnectionID]int64{}
}

// catchUpLocked applies project's events after the cursor, read from r (the store, or a
// transaction). w.mu must be held.
func (w *workLedger) catchUpLocked(ctx context.Context, r store.Reader, project contract.ProjectID) error {
	return w.cursor.CatchUp(ctx, r, project, w.applyLocked)
}

// catchUpToLocked is catchUpLocked to at least the head to, which the caller read, locked
// or left with its own commit. w.mu must be held.
func (w *workLedger) catchUpToLocked(ctx context.Context, r store.Reader, project contract.ProjectID, to int64) error {
	return w.cursor.CatchUpTo(ctx, r, project, to, w.applyLocked)
}

func (w *workLedger) applyLocked(e store.Event) error {
	switch e.Type {
	case event.LeaseAcquired:
		var d event.LeaseAcquiredData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		w.gens[d.Connection] = max(w.gens[d.Connection], d.Generation)
	case event.WorkClaimed:
		var d event.WorkClaimedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		w.claims[d.Work] = d
	case event.WorkReported:
		var d event.WorkReportedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		w.reports[d.Work] = d
	}
	return nil
}

// checkLease refuses a call of workerID under generation gen unless l, the Connection's
// lease, is live and is that one.
func checkLease(l *lease, workerID string, gen int64, now time.Time) error {
	switch {
	case l == nil || l.gen == 0 || gen > l.gen:
		return contract.Errorf(contract.CodeLeaseExpired,
			"generation %d is not a lease this authority granted; drop it and acquire a lease with a Poll without a generation.", gen)
	case gen < l.gen:
		return contract.Errorf(contract.CodeLeaseSuperseded,
			"generation %d of this Connection's lease was superseded by generation %d; drop it and acquire a lease anew.", gen, l.gen)
	case l.worker != workerID:
		return contract.Errorf(contract.CodeLeaseSuperseded,
			"generation %d of this Connection's lease belongs to another worker instance; acquire a lease of your own.", gen)
	case !l.live(now):
		return contract.Errorf(contract.CodeLeaseExpired,
			"the lease of generation %d expired or was released; acquire a lease anew and renew it before heartbeatAfterMs passes.", gen)
	}
	return nil
}

// leaseWire returns l as the hop answers it.
func (d *Dispatcher) leaseWire(l *lease, now time.Time) *contract.Lease {
	return &contract.Lease{WorkerID: l.worker, Generation: l.gen, ExpiresAt: l.expires, ServerTime: now,
		HeartbeatAfterMs: d.leaseTTL.Milliseconds() / 3}
}

// acquire gives workerID the lease of conn, or renews the lease it already holds when
// the same startup Poll is sent again (one acquisition). Another instance's live lease
// is refused: exactly one worker instance holds a Connection. A new generation makes
// every Operation still at a worker under an older generation need a person: it was
// dispatched and nothing is ever run twice.
func (d *Dispatcher) acquire(ctx context.Context, conn contract.Connection, workerID string) (*contract.Lease, error) {
	var out *contract.Lease
	err := d.commitWork(ctx, conn.Project, conn.ID, false, func(wc *workCommit) error {
		cur := wc.lease
		if cur.live(wc.now) && cur.worker == workerID {
			wc.setLease(&lease{worker: workerID, gen: cur.gen, expires: wc.now.Add(d.leaseTTL)})
			out = d.leaseWire(wc.newLease, wc.now)
			return nil
		}
		if cur.live(wc.now) {
			return contract.Errorf(contract.CodeLeaseHeld,
				"another worker instance holds this Connection's lease until %s; run one worker per Connection, or stop the other and retry once its lease expires.",
				cur.expires.Format(time.RFC3339))
		}
		gen := max(cur.gen, wc.w.gens[conn.ID]) + 1
		wc.setLease(&lease{worker: workerID, gen: gen, expires: wc.now.Add(d.leaseTTL)})
		if err := wc.event(fmt.Sprintf("lease-%s-%d", conn.ID, gen), "system",
			event.LeaseAcquiredData{Connection: conn.ID, WorkerID: workerID, Generation: gen, ExpiresAt: wc.newLease.expires}); err != nil {
			return err
		}
		d.orphansLocked(wc, conn.ID, "the worker instance that took it lost its lease before reporting")
		out = d.leaseWire(wc.newLease, wc.now)
		return nil
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, contract.Errorf(contract.CodeLeaseHeld, "another worker instance acquired this Connection's lease at the same moment; run one worker per Connection.")
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// renew extends the lease workerID holds at generation gen. It writes the lease row
// only: no event, so no held Poll wakes and no ledger has anything to catch up.
func (d *Dispatcher) renew(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) (*contract.Lease, error) {
	var out *contract.Lease
	err := d.store.Update(ctx, func(tx store.Tx) error {
		row, err := tx.LockLease(ctx, string(conn.Project), string(conn.ID))
		if err != nil {
			return fmt.Errorf("renew lease: %w", err)
		}
		now := d.nowUTC()
		if err := checkLease(leaseOf(row), req.WorkerID, req.Generation, now); err != nil {
			return err
		}
		row.ExpiresAt = now.Add(d.leaseTTL)
		if err := tx.PutLease(ctx, row); err != nil {
			return fmt.Errorf("renew lease: %w", err)
		}
		out = d.leaseWire(leaseOf(row), now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// release gives up the lease workerID holds at generation gen, at shutdown. Work it
// claimed and never reported needs a person at once.
func (d *Dispatcher) release(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) error {
	return d.commitWork(ctx, conn.Project, conn.ID, false, func(wc *workCommit) error {
		if err := checkLease(wc.lease, req.WorkerID, req.Generation, wc.now); err != nil {
			return err
		}
		// A released lease expires at the epoch, so it is expired on every instance's
		// clock, not only on those at or past this one's.
		wc.setLease(&lease{worker: req.WorkerID, gen: req.Generation, expires: time.Unix(0, 0).UTC()})
		if err := wc.event("", "system", event.LeaseReleasedData{Connection: conn.ID, WorkerID: req.WorkerID, Generation: req.Generation, ExpiresAt: wc.now}); err != nil {
			return err
		}
		d.orphansLocked(wc, conn.ID, "the worker instance that took it released its lease before reporting")
		return nil
	})
}

// orphansLocked makes every Operation claimed on conn, not reported and still at a
// worker need a person: its lease is gone, and it is never re-dispatched. The ledgers
// were caught up under conn's lease lock, so they hold every claim made under it.
func (d *Dispatcher) orphansLocked(wc *workCommit, conn contract.ConnectionID, why string) {
	for _, c := range atWorkerLocked(wc.l, wc.w, conn) {
		wc.op(event.Operation{Agent: c.Agent, Ordinal: c.Ordinal, State: contract.OpNeedsPerson, ReasonCode: contract.CodeWorkerLost,
			Reason: "dispatched to a worker, but " + why + "; a person must check whether it ran (docket reconcile)."})
	}
}

// atWorkerLocked returns the claims on conn, or on any Connection when conn is "", that
// were never reported and whose Operation still waits at a worker, by work id. l.mu and
// w.mu must be held.
func atWorkerLocked(l *ledger, w *workLedger, conn contract.ConnectionID) []event.WorkClaimedData {
	var out []event.WorkClaimedData
	for _, id := range slices.Sorted(maps.Keys(w.claims)) {
		c := w.claims[id]
		if conn != "" && c.Connection != conn {
			continue
		}
		if _, reported := w.reports[id]; reported {
			continue
		}
		op := l.opLocked(c.Agent, c.Ordinal)
		if op == nil || op.state != contract.OpRunning || op.stage != contract.StageAtWorker {
			continue
		}
		out = append(out, c)
	}
	return out
}

// SweepExpired makes the work claimed under every lease that expired without a new
// worker taking the Connection need a person, and returns how many Operations it
// settled. A takeover or a release settles such work too, but a worker that dies and
// never comes back does neither; without the sweep its Operations would wait at the
// worker forever and the agent's held call would never learn that their effect is
// unknown. Nothing is re-dispatched. Each Connection is settled in
// the transaction a takeover uses, under its lease row lock, so sweeping twice, or on
// two instances at once, appends nothing more; a late report from the lost worker is
// then recorded, not applied. It reads the time from the authority's clock.
func (d *Dispatcher) SweepExpired(ctx context.Context) (int, error) {
	ps, err := d.store.Projects(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep expired leases: %w", err)
	}
	settled := 0
	for _, p := range ps {
		project := contract.ProjectID(p.ID)
		conns, err := d.stranded(ctx, project)
		if err != nil {
			return settled, fmt.Errorf("sweep expired leases of %s: %w", project, err)
		}
		for _, conn := range conns {
			n, err := d.sweepConnection(ctx, project, conn)
			settled += n
			if err != nil {
				return settled, fmt.Errorf("sweep expired lease of %s: %w", conn, err)
			}
		}
	}
	return settled, nil
}

// stranded returns the Connections of project whose lease row shows expired at the
// authority's clock and on which claimed work still waits at a worker. It decides
// nothing: [Dispatcher.sweepConnection] checks again under the row lock. It keeps the
// sweep of an idle project to one read of its log's tail.
func (d *Dispatcher) stranded(ctx context.Context, project contract.ProjectID) ([]contract.ConnectionID, error) {
	st := d.store
	l := d.ops.ledger(project)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.catchUpLocked(ctx, st, project); err != nil {
		return nil, err
	}
	w := d.work(project)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.catchUpLocked(ctx, st, project); err != nil {
		return nil, err
	}
	now := d.nowUTC()
	var out []contract.ConnectionID
	for _, c := range atWorkerLocked(l, w, "") {
		if slices.Contains(out, c.Connection) {
			continue
		}
		row, err := st.Lease(ctx, string(c.Connection))
		if errors.Is(err, store.ErrNotFound) {
			continue // a lease older than the lease rows; the next takeover settles it
		}
		if err != nil {
			return nil, fmt.Errorf("read lease of %s: %w", c.Connection, err)
		}
		if ls := leaseOf(row); ls.gen > 0 && !ls.live(now) {
			out = append(out, c.Connection)
		}
	}
	return out, nil
}

// sweepConnection settles the work at a worker on conn when its lease, locked, is still
// expired: a renewal or a takeover that committed since [Dispatcher.stranded] read the
// row wins, and the sweep does nothing.
func (d *Dispatcher) sweepConnection(ctx context.Context, project contract.ProjectID, conn contract.ConnectionID) (int, error) {
	n := 0
	err := d.commitWork(ctx, project, conn, false, func(wc *workCommit) error {
		cur := wc.lease
		n = 0
		if cur.gen == 0 || cur.live(wc.now) {
			return nil
		}
		why := fmt.Sprintf("worker instance %s lost its lease (generation %d, expired at %s) before reporting, and no worker took the Connection since",
			cur.worker, cur.gen, cur.expires.Format(time.RFC3339))
		d.orphansLocked(wc, conn, why)
		n = len(wc.ops)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Run sweeps expired leases ([Dispatcher.SweepExpired]) every half lease TTL until ctx
// ends: a worker that dies and never returns must not leave its Operations, and the
// agents' held calls, waiting forever. Every poll wait (at most that half TTL) it says
// why queued work waits ([Dispatcher.ExplainAll]), which no Poll does when no worker
// polls. A failed sweep is logged and retried at the next tick, so the authority keeps
// answering; Run returns nil when ctx ends.
func (d *Dispatcher) Run(ctx context.Context) error {
	tick := time.NewTicker(d.leaseTTL / 2)
	defer tick.Stop()
	explain := time.NewTicker(min(d.pollWait, d.leaseTTL/2))
	defer explain.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-explain.C:
			if _, err := d.ExplainAll(ctx); err != nil && ctx.Err() == nil {
				d.log.WarnContext(ctx, "explaining waiting work failed; retrying at the next tick", logErr, err)
			}
			continue
		case <-tick.C:
		}
		n, err := d.SweepExpired(ctx)
		if err != nil && ctx.Err() == nil {
			d.log.WarnContext(ctx, "sweep of expired worker leases failed; retrying at the next tick", logErr, err)
		}
		if n > 0 {
			d.log.InfoContext(ctx, "work of expired worker leases needs a person", logOperations, n)
		}
	}
}

// LeaseTTL is how long a lease lasts from its grant or its last renewal: a lease that
// expires at E was last renewed at E - LeaseTTL.
func (d *Dispatcher) LeaseTTL() time.Duration { return d.leaseTTL }
