package authority

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Event types of the worker hop (DESIGN.md §8.1). Leases, claims and reports live in the
// project's log like Operations do, so several authorities over one store agree on who
// holds a Connection. Each acquisition, claim and report has an event id derived from
// what it names, so the store's unique event id turns a race between two instances into
// one winner and one [store.ErrConflict] — on SQLite and PostgreSQL alike.
const (
	evLeaseAcquired = "worker.lease.acquired" // leaseEvent
	evLeaseRenewed  = "worker.lease.renewed"  // leaseEvent
	evLeaseReleased = "worker.lease.released" // leaseEvent
	evWorkClaimed   = "work.claimed"          // claimEvent
	evWorkReported  = "work.reported"         // reportEvent
)

// leaseEvent is the data of a lease event.
type leaseEvent struct {
	Connection contract.ConnectionID `json:"connection"`
	WorkerID   string                `json:"workerId"`
	Generation int64                 `json:"workerGeneration"`
	ExpiresAt  time.Time             `json:"expiresAt"`
}

// lease is the latest lease of one Connection as the work ledger knows it.
type lease struct {
	worker   string
	gen      int64
	expires  time.Time
	released bool
}

// live reports whether l still holds its Connection at now.
func (l *lease) live(now time.Time) bool { return l != nil && !l.released && now.Before(l.expires) }

// workLedger is the projection of one project's hop events.
type workLedger struct {
	mu      sync.Mutex                       // guards the fields below; taken after a ledger.mu
	cursor  int64                            // the last event applied
	leases  map[contract.ConnectionID]*lease // the latest lease of each Connection
	claims  map[string]claimEvent            // work id → its claim
	reports map[string]reportEvent           // work id → its report
}

func newWorkLedger() *workLedger {
	return &workLedger{leases: map[contract.ConnectionID]*lease{}, claims: map[string]claimEvent{}, reports: map[string]reportEvent{}}
}

// catchUpLocked applies project's events after the cursor. w.mu must be held.
func (w *workLedger) catchUpLocked(ctx context.Context, r store.Reader, project contract.ProjectID) error {
	return scanLog(ctx, r, project, w.cursor, -1, func(e store.Event) error {
		if err := w.applyLocked(e); err != nil {
			return fmt.Errorf("apply event %d of %s: %w", e.Seq, project, err)
		}
		w.cursor = e.Seq
		return nil
	})
}

func (w *workLedger) applyLocked(e store.Event) error {
	switch e.Type {
	case evLeaseAcquired, evLeaseRenewed, evLeaseReleased:
		var d leaseEvent
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if e.Type == evLeaseAcquired {
			w.leases[d.Connection] = &lease{worker: d.WorkerID, gen: d.Generation, expires: d.ExpiresAt}
			return nil
		}
		l := w.leases[d.Connection]
		if l == nil || l.gen != d.Generation {
			return nil // a renewal that lost a race with a newer acquisition changes nothing
		}
		if e.Type == evLeaseReleased {
			l.released = true
		} else {
			l.expires = d.ExpiresAt
		}
	case evWorkClaimed:
		var d claimEvent
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		w.claims[d.Work] = d
	case evWorkReported:
		var d reportEvent
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		w.reports[d.Work] = d
	}
	return nil
}

// checkLeaseLocked refuses a call of workerID under generation gen on conn unless that
// is the Connection's live lease. w.mu must be held.
func (w *workLedger) checkLeaseLocked(conn contract.ConnectionID, workerID string, gen int64, now time.Time) error {
	l := w.leases[conn]
	switch {
	case l == nil || gen > l.gen:
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

// acquire gives workerID the lease of conn, or the lease it already holds when the same
// startup Poll is sent again (one acquisition). Another instance's live lease is
// refused: exactly one worker instance holds a Connection. A new generation makes every
// Operation still at a worker under an older generation need a person: it was dispatched
// and nothing is ever run twice (DESIGN.md §6.4).
func (d *Dispatcher) acquire(ctx context.Context, conn contract.Connection, workerID string) (*contract.Lease, error) {
	var out *contract.Lease
	err := d.commitWork(ctx, conn.Project, func(wc *workCommit) error {
		cur := wc.w.leases[conn.ID]
		if cur.live(wc.now) && cur.worker == workerID {
			return d.renewLocked(wc, conn, cur)
		}
		if cur.live(wc.now) {
			return contract.Errorf(contract.CodeLeaseHeld,
				"another worker instance holds this Connection's lease until %s; run one worker per Connection, or stop the other and retry once its lease expires.",
				cur.expires.Format(time.RFC3339))
		}
		gen := int64(1)
		if cur != nil {
			gen = cur.gen + 1
		}
		ev := leaseEvent{Connection: conn.ID, WorkerID: workerID, Generation: gen, ExpiresAt: wc.now.Add(d.leaseTTL)}
		wc.event(fmt.Sprintf("lease-%s-%d", conn.ID, gen), evLeaseAcquired, "system", ev)
		d.orphansLocked(wc, conn.ID, "the worker instance that took it lost its lease before reporting")
		out = d.leaseWire(&lease{worker: workerID, gen: gen, expires: ev.ExpiresAt}, wc.now)
		return nil
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, contract.Errorf(contract.CodeLeaseHeld, "another worker instance acquired this Connection's lease at the same moment; run one worker per Connection.")
	}
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = d.leaseAfter(ctx, conn, workerID)
	}
	return out, nil
}

// leaseAfter reads back the lease workerID holds after a renewing commit.
func (d *Dispatcher) leaseAfter(ctx context.Context, conn contract.Connection, workerID string) *contract.Lease {
	w := d.work(conn.Project)
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.leases[conn.ID]
	cp := *l
	return d.leaseWire(&cp, d.o.a.nowUTC())
}

// renewLocked extends cur, the lease of conn, by the lease TTL.
func (d *Dispatcher) renewLocked(wc *workCommit, conn contract.Connection, cur *lease) error {
	wc.event("", evLeaseRenewed, "system", leaseEvent{Connection: conn.ID, WorkerID: cur.worker, Generation: cur.gen, ExpiresAt: wc.now.Add(d.leaseTTL)})
	return nil
}

// renew extends the lease workerID holds at generation gen.
func (d *Dispatcher) renew(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) (*contract.Lease, error) {
	err := d.commitWork(ctx, conn.Project, func(wc *workCommit) error {
		if err := wc.w.checkLeaseLocked(conn.ID, req.WorkerID, req.Generation, wc.now); err != nil {
			return err
		}
		return d.renewLocked(wc, conn, wc.w.leases[conn.ID])
	})
	if err != nil {
		return nil, err
	}
	return d.leaseAfter(ctx, conn, req.WorkerID), nil
}

// release gives up the lease workerID holds at generation gen, at shutdown. Work it
// claimed and never reported needs a person at once.
func (d *Dispatcher) release(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) error {
	return d.commitWork(ctx, conn.Project, func(wc *workCommit) error {
		if err := wc.w.checkLeaseLocked(conn.ID, req.WorkerID, req.Generation, wc.now); err != nil {
			return err
		}
		wc.event("", evLeaseReleased, "system", leaseEvent{Connection: conn.ID, WorkerID: req.WorkerID, Generation: req.Generation, ExpiresAt: wc.now})
		d.orphansLocked(wc, conn.ID, "the worker instance that took it released its lease before reporting")
		return nil
	})
}

// orphansLocked makes every Operation claimed on conn, not reported and still at a
// worker need a person: its lease is gone, and it is never re-dispatched.
func (d *Dispatcher) orphansLocked(wc *workCommit, conn contract.ConnectionID, why string) {
	ids := make([]string, 0, len(wc.w.claims))
	for id := range wc.w.claims {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := wc.w.claims[id]
		if c.Connection != conn {
			continue
		}
		if _, reported := wc.w.reports[id]; reported {
			continue
		}
		op := wc.l.opLocked(c.Agent, c.Ordinal)
		if op == nil || op.state != contract.OpRunning || op.stage != contract.StageAtWorker {
			continue
		}
		wc.op(opEvent{Agent: c.Agent, Ordinal: c.Ordinal, State: contract.OpNeedsPerson,
			Reason: "dispatched to a worker, but " + why + "; a person must check whether it ran (docket reconcile)."})
	}
}
