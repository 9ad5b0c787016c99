package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
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

// lease is one lease of a Connection as its store row holds it: one worker instance's,
// in one slot. A Connection holds up to [Config.MaxWorkers] live leases at once.
type lease struct {
	slot    int
	worker  string
	gen     int64 // 0: never granted
	expires time.Time
}

func leaseOf(l store.Lease) *lease {
	return &lease{slot: l.Slot, worker: l.WorkerID, gen: l.Generation, expires: l.ExpiresAt}
}

// leaseSet is every lease row of one Connection, by slot.
type leaseSet []*lease

func leasesOf(rows []store.Lease) leaseSet {
	out := make(leaseSet, 0, len(rows))
	for _, r := range rows {
		out = append(out, leaseOf(r))
	}
	return out
}

// byGen returns the lease of generation gen, or nil: a generation names one lease of a
// Connection, since generations grow across all its slots.
func (ls leaseSet) byGen(gen int64) *lease {
	if gen <= 0 {
		return nil
	}
	for _, l := range ls {
		if l.gen == gen {
			return l
		}
	}
	return nil
}

// maxGen returns the highest generation ls holds, 0 when none was granted.
func (ls leaseSet) maxGen() int64 {
	var g int64
	for _, l := range ls {
		g = max(g, l.gen)
	}
	return g
}

// liveCount returns how many leases of ls are live at now.
func (ls leaseSet) liveCount(now time.Time) int {
	n := 0
	for _, l := range ls {
		if l.live(now) {
			n++
		}
	}
	return n
}

// with returns ls with l in its slot, replacing the lease there.
func (ls leaseSet) with(l *lease) leaseSet {
	out := slices.Clone(ls)
	for i, o := range out {
		if o.slot == l.slot {
			out[i] = l
			return out
		}
	}
	return append(out, l)
}

// live reports whether l still holds its Connection at now. A release sets expires to
// the epoch.
func (l *lease) live(now time.Time) bool { return l != nil && l.gen > 0 && now.Before(l.expires) }

// applyHopLocked applies a hop event to the ledger: an acquisition's generation, a claim,
// a report. The project's ledger must be locked.
func (l *ledgerState) applyHopLocked(e store.Event) error {
	switch e.Type {
	case event.LeaseAcquired:
		var d event.LeaseAcquiredData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		l.gens[d.Connection] = max(l.gens[d.Connection], d.Generation)
	case event.WorkClaimed:
		d, err := event.DecodeWorkClaimed(e.Data)
		if err != nil {
			return err
		}
		l.claims[d.Work] = d
	case event.WorkReported:
		d, err := event.DecodeWorkReported(e.Data)
		if err != nil {
			return err
		}
		l.reports[d.Work] = d
	}
	return nil
}

// checkLease refuses a call of workerID under generation gen unless the Connection's
// lease of that generation, one of ls, is live and is that worker's.
func checkLease(ls leaseSet, workerID string, gen int64, now time.Time) error {
	l := ls.byGen(gen)
	switch {
	case l == nil && (gen <= 0 || gen > ls.maxGen()):
		return contract.Errorf(contract.CodeLeaseExpired,
			"generation %d is not a lease this authority granted; drop it and acquire a lease with a Poll without a generation.", gen)
	case l == nil:
		return contract.Errorf(contract.CodeLeaseSuperseded,
			"generation %d of this Connection's lease was superseded by a later one in its slot; drop it and acquire a lease anew.", gen)
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

// acquire gives workerID a lease of conn of its own, or renews the lease it already holds
// when the same startup Poll is sent again (one acquisition). Several worker instances
// hold a Connection at once, each under its own generation, up to [Config.MaxWorkers]
// live leases; one more is refused. The new lease takes the slot of a lease that is no
// longer live, or a new slot. Every Operation still at a worker under a generation that
// is no longer live then needs a person: it was dispatched and nothing is ever run twice.
// It returns the lease and the Connection's leases as it commits them. A Connection the
// log shows revoked is refused.
func (d *Dispatcher) acquire(ctx context.Context, conn contract.Connection, workerID string) (*contract.Lease, leaseSet, error) {
	var out *contract.Lease
	var ls leaseSet
	err := d.commitWork(ctx, conn.Project, conn.ID, false, func(wc *workCommit) error {
		if _, err := wc.l.connLocked(conn); err != nil {
			return err
		}
		defer func() {
			if wc.newLease != nil {
				ls = wc.leases.with(wc.newLease)
			}
		}()
		for _, cur := range wc.leases {
			if cur.live(wc.now) && cur.worker == workerID {
				wc.setLease(&lease{slot: cur.slot, worker: workerID, gen: cur.gen, expires: wc.now.Add(d.leaseTTL)})
				out = d.leaseWire(wc.newLease, wc.now)
				return nil
			}
		}
		if n := wc.leases.liveCount(wc.now); n >= d.maxWorkers {
			return contract.Errorf(contract.CodeLeaseHeld,
				"%d worker instances hold this Connection's leases, its most; stop one, or retry once one of their leases expires.", n)
		}
		slot := len(wc.leases) // slots run 0…n-1: a new one is the next
		for _, cur := range wc.leases {
			if !cur.live(wc.now) {
				slot = cur.slot
				break
			}
		}
		gen := max(wc.leases.maxGen(), wc.l.gens[conn.ID]) + 1
		wc.setLease(&lease{slot: slot, worker: workerID, gen: gen, expires: wc.now.Add(d.leaseTTL)})
		if err := wc.event(fmt.Sprintf("lease-%s-%d", conn.ID, gen), "system",
			event.LeaseAcquiredData{Connection: conn.ID, WorkerID: workerID, Generation: gen, ExpiresAt: wc.newLease.expires}); err != nil {
			return err
		}
		d.orphansLocked(wc, conn.ID, "the worker instance that took it lost its lease before reporting")
		out = d.leaseWire(wc.newLease, wc.now)
		return nil
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, nil, contract.Errorf(contract.CodeLeaseHeld, "another worker instance acquired a lease of this Connection at the same moment; poll again.")
	}
	if err != nil {
		return nil, nil, err
	}
	return out, ls, nil
}

// renew extends the lease workerID holds at generation gen. It writes the lease row only
// and no event, so no held Poll wakes. It runs the ledger's write sequence all the same:
// the door proves a Connection's key without reading its row once it proved it before
// (identity.Directory.ConnectionOf), and every hop call, a renewal included, refuses a
// Connection its project's log shows revoked at the head it reads (connLocked). The head
// comes with the lease rows in one store call (Tx.LockLeasesHead), so the check costs a
// renewal no store call; it waits for the ledger's lock, which claims and reports hold
// only for their transaction.
func (d *Dispatcher) renew(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) (*contract.Lease, error) {
	var out *contract.Lease
	err := d.commitWork(ctx, conn.Project, conn.ID, false, func(wc *workCommit) error {
		if _, err := wc.l.connLocked(conn); err != nil {
			return err
		}
		if err := checkLease(wc.leases, req.WorkerID, req.Generation, wc.now); err != nil {
			return err
		}
		l := *wc.leases.byGen(req.Generation)
		l.expires = wc.now.Add(d.leaseTTL)
		wc.setLease(&l)
		out = d.leaseWire(&l, wc.now)
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
		if _, err := wc.l.connLocked(conn); err != nil {
			return err
		}
		if err := checkLease(wc.leases, req.WorkerID, req.Generation, wc.now); err != nil {
			return err
		}
		// A released lease expires at the epoch, so it is expired on every instance's
		// clock, not only on those at or past this one's.
		wc.setLease(&lease{slot: wc.leases.byGen(req.Generation).slot, worker: req.WorkerID, gen: req.Generation, expires: time.Unix(0, 0).UTC()})
		if err := wc.event("", "system", event.LeaseReleasedData{Connection: conn.ID, WorkerID: req.WorkerID, Generation: req.Generation, ExpiresAt: wc.now}); err != nil {
			return err
		}
		d.orphansLocked(wc, conn.ID, "the worker instance that took it released its lease before reporting")
		return nil
	})
}

// orphansLocked makes every Operation claimed on conn, not reported and still at a
// worker under a lease that is not live once wc commits need a person: its lease is
// gone, and it is never re-dispatched. Work claimed under another worker's live lease is
// left to it. The ledger was caught up under conn's lease lock, so it holds every claim
// made under it.
func (d *Dispatcher) orphansLocked(wc *workCommit, conn contract.ConnectionID, why string) {
	d.orphansWhy(wc, conn, func(event.WorkClaimedData, *lease) string { return why })
}

// orphansWhy is orphansLocked with the reason told for each claim and the lease it was
// made under (nil when no row holds that generation any more).
func (d *Dispatcher) orphansWhy(wc *workCommit, conn contract.ConnectionID, whyOf func(event.WorkClaimedData, *lease) string) {
	after := wc.leases
	if wc.newLease != nil {
		after = after.with(wc.newLease)
	}
	for _, c := range atWorkerLocked(wc.l, conn) {
		l := after.byGen(c.Generation)
		if l != nil && l.live(wc.now) {
			continue
		}
		why := whyOf(c, l)
		wc.op(event.Operation{Agent: c.Agent, Ordinal: c.Ordinal, State: contract.OpNeedsPerson, ReasonCode: contract.CodeWorkerLost,
			Reason: "dispatched to a worker, but " + why + "; a person must check whether it ran (docket reconcile)."})
	}
}

// atWorkerLocked returns the claims on conn, or on any Connection when conn is "", that
// were never reported and whose Operation still waits at a worker, by work id. l must be
// locked.
func atWorkerLocked(l *ledger, conn contract.ConnectionID) []event.WorkClaimedData {
	var out []event.WorkClaimedData
	for _, id := range slices.Sorted(maps.Keys(l.claims)) {
		c := l.claims[id]
		if conn != "" && c.Connection != conn {
			continue
		}
		if _, reported := l.reports[id]; reported {
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
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, st); err != nil {
		return nil, err
	}
	now := d.nowUTC()
	var out []contract.ConnectionID
	read := map[contract.ConnectionID]leaseSet{}
	for _, c := range atWorkerLocked(l, "") {
		if slices.Contains(out, c.Connection) {
			continue
		}
		ls, ok := read[c.Connection]
		if !ok {
			rows, err := st.Leases(ctx, string(c.Connection))
			if err != nil {
				return nil, fmt.Errorf("read leases of %s: %w", c.Connection, err)
			}
			ls = leasesOf(rows)
			read[c.Connection] = ls
		}
		if ls.maxGen() == 0 {
			continue // a lease older than the lease rows; the next takeover settles it
		}
		if cl := ls.byGen(c.Generation); cl == nil || !cl.live(now) {
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
		n = 0
		if wc.leases.maxGen() == 0 {
			return nil
		}
		d.orphansWhy(wc, conn, func(c event.WorkClaimedData, l *lease) string {
			if l == nil {
				return fmt.Sprintf("worker instance %s lost its lease (generation %d) before reporting", c.WorkerID, c.Generation)
			}
			return fmt.Sprintf("worker instance %s lost its lease (generation %d, expired at %s) before reporting, and no worker took its place since",
				c.WorkerID, c.Generation, l.expires.Format(time.RFC3339))
		})
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
