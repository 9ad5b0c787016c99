package operation

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
)

// Work that waits is never silent: an Operation whose execution no live
// Connection can serve says why, as a reasonCode and a reason on its entry, until it is
// claimed. Explain finds the reason from the project's Connections, tool locks and
// Sources as the operation ledger holds them (setup.go), the lease rows, and from what each worker last advertised in a Poll to this instance, and
// appends an [event.OpWaiting] event when the reason changed. That event counts only
// while the work still waits, so a claim that came first in the log always wins.

// advert is what a worker instance offered in its latest Poll on a Connection.
type advert struct {
	worker string
	gen    int64
	tools  []contract.ToolDescriptor
	vault  []string // the Source names its vault holds
	at     time.Time
	until  time.Time // the lease's expiry as the Poll was answered
}

// advertise remembers what the worker polling conn under l offered, by its lease
// generation: several workers may hold one Connection.
func (d *Dispatcher) advertise(conn contract.ConnectionID, l *contract.Lease, req contract.PollRequest) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.adverts[conn]
	if m == nil {
		m = map[int64]advert{}
		d.adverts[conn] = m
	}
	m[l.Generation] = advert{worker: l.WorkerID, gen: l.Generation, tools: slices.Clone(req.Tools),
		vault: slices.Clone(req.VaultSources), at: d.nowUTC(), until: l.ExpiresAt}
}

// Advertised returns what a worker of conn offered in its latest Poll to this instance:
// the worker, its Tools and the Source names its vault holds; ok is false when no worker
// polled conn here. Of several workers it is the live one that polled last (else the
// one that polled last). The worker is live while the lease that Poll was answered
// under has not expired. It is what `docket tool lock` without a digest locks and what
// the Tools page lists (docs/workers.md, "Direct Actions").
func (d *Dispatcher) Advertised(conn contract.ConnectionID) (w contract.ToolWorker, tools []contract.ToolDescriptor, vault []string, ok bool) {
	now := d.nowUTC()
	d.mu.Lock()
	var a advert
	for _, c := range d.adverts[conn] {
		cLive, aLive := now.Before(c.until), now.Before(a.until)
		if !ok || (cLive && !aLive) || (cLive == aLive && c.at.After(a.at)) {
			a, ok = c, true
		}
	}
	d.mu.Unlock()
	if !ok {
		return contract.ToolWorker{}, nil, nil, false
	}
	w = contract.ToolWorker{WorkerID: a.worker, Generation: a.gen, Live: now.Before(a.until), PolledAt: a.at}
	return w, slices.Clone(a.tools), slices.Clone(a.vault), true
}

// advertOf returns what the worker holding l on conn offered in its latest Poll here, and
// forgets what workers whose generations ls no longer holds offered.
func (d *Dispatcher) advertOf(conn contract.ConnectionID, l *lease, ls leaseSet) (advert, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.adverts[conn]
	for gen := range m {
		if ls.byGen(gen) == nil {
			delete(m, gen)
		}
	}
	a, ok := m[l.gen]
	if !ok || a.worker != l.worker {
		return advert{}, false
	}
	return a, ok
}

// blockerRank orders reasons by how far the work got: of several Connections, the
// Operation shows the reason of the one that came closest to serving it.
var blockerRank = map[contract.Code]int{
	contract.CodeNoToolLocked:      0,
	contract.CodeNoSourceBound:     1,
	contract.CodeSourceAmbiguous:   1,
	contract.CodeNoLiveWorker:      2,
	contract.CodeToolNotAdvertised: 3,
}

// ExplainAll runs [Dispatcher.Explain] on every project and returns how many
// Operations it gave a new reason.
func (d *Dispatcher) ExplainAll(ctx context.Context) (int, error) {
	ps, err := d.store.Projects(ctx)
	if err != nil {
		return 0, fmt.Errorf("explain waiting work: %w", err)
	}
	n := 0
	for _, p := range ps {
		m, err := d.Explain(ctx, contract.ProjectID(p.ID))
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Explain says why each of project's queued Operations is not dispatched, and returns
// how many it gave a new reason. Work some live Connection can serve has no reason; one
// that had a reason and can now be served has it cleared.
func (d *Dispatcher) Explain(ctx context.Context, project contract.ProjectID) (int, error) {
	return d.explainAt(ctx, project, -1)
}

// explainAt is [Dispatcher.Explain] reading the queue at head, a head of project's log
// its caller read during the same call (-1: read it). The read precedes the writes,
// which look at the ledger again in their transaction (changed), so it is as fresh as a
// head read here would be (docs/architecture.md, "Catch-ups from memory").
func (d *Dispatcher) explainAt(ctx context.Context, project contract.ProjectID, head int64) (int, error) {
	// The live Connections and their setup, read from the ledger with the queue.
	qctx := ctx
	if head >= 0 {
		qctx = eventlog.WithHead(ctx, project, head)
	}
	queued, conns, err := d.ops.queuedWithConns(qctx, project)
	if err != nil || len(queued) == 0 {
		return 0, err
	}
	type change struct {
		q   Dispatch
		why unserved // zero: the reason is cleared
	}
	var changes []change
	for _, q := range queued {
		why, known, err := d.explain(ctx, conns, q.Request)
		if err != nil {
			return 0, fmt.Errorf("explain waiting work of %s: %w", project, err)
		}
		if known {
			changes = append(changes, change{q: q, why: why})
		}
	}
	// changed keeps the changes the ledger lacks: only those are appended, and a Poll that
	// explains nothing new writes nothing.
	changed := func(l *ledger) []change {
		var out []change
		for _, c := range changes {
			op := l.opLocked(c.q.Agent, c.q.Ordinal)
			if op == nil || op.state != contract.OpRunning || op.stage != contract.StageNotDispatched {
				continue // claimed or settled since it was read
			}
			if code, reason := op.waitReason(); code != c.why.code || reason != c.why.reason {
				out = append(out, c)
			}
		}
		return out
	}
	l := d.ops.ledger(project)
	l.lock()
	changes = changed(l)
	l.unlock()
	if len(changes) == 0 {
		return 0, nil
	}
	n := 0
	err = d.commitWork(ctx, project, "", false, func(wc *workCommit) error {
		todo := changed(wc.l)
		n = len(todo)
		for _, c := range todo {
			if err := wc.event("", "system", event.OpWaitingData{Agent: c.q.Agent, Ordinal: c.q.Ordinal,
				Reason: c.why.reason, ReasonCode: c.why.code}); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// explain returns why none of conns can serve q now: a zero unserved when one can, and
// known false when this instance cannot tell (a live worker it has not heard from may
// offer the Tool), so that it leaves the reason another instance gave.
func (d *Dispatcher) explain(ctx context.Context, conns []connSetup, q contract.ExecutionRequest) (unserved, bool, error) {
	best := unserved{contract.CodeNoToolLocked,
		fmt.Sprintf("tool %s is locked on no live Connection of this project; lock it on the Connection whose worker runs it (docket tool lock).", q.Tool)}
	now := d.nowUTC()
	known := true
	for _, cs := range conns {
		conn := cs.conn
		digest, _, why := fit(cs, q)
		if why == nil {
			var heard bool
			var err error
			if why, heard, err = d.workerFit(ctx, conn, q.Tool, digest, now); err != nil {
				return unserved{}, false, err
			}
			if why == nil && heard {
				return unserved{}, true, nil // this Connection serves it: its worker claims it at its next Poll
			}
			if why == nil {
				known = false
				continue
			}
		}
		if blockerRank[why.code] > blockerRank[best.code] {
			best = *why
		}
	}
	return best, known, nil
}

// workerFit says why conn, which may run tool locked at digest, has no worker to run it:
// no worker holds a lease of it, or none of those that do offered the Tool at that digest
// in its latest Poll to this instance. heard is false when a live worker holds conn that
// this instance has not heard from: it may offer the Tool.
func (d *Dispatcher) workerFit(ctx context.Context, conn contract.Connection, tool, digest string, now time.Time) (why *unserved, heard bool, err error) {
	rows, err := d.store.Leases(ctx, string(conn.ID))
	if err != nil {
		return nil, false, fmt.Errorf("read leases of %s: %w", conn.ID, err)
	}
	ls := leasesOf(rows)
	var first *unserved
	unheard := false
	for _, l := range ls {
		if !l.live(now) {
			continue
		}
		a, ok := d.advertOf(conn.ID, l, ls)
		if !ok {
			unheard = true
			continue
		}
		i := slices.IndexFunc(a.tools, func(t contract.ToolDescriptor) bool { return string(t.Tool) == tool })
		var u *unserved
		switch {
		case i < 0:
			u = &unserved{contract.CodeToolNotAdvertised,
				fmt.Sprintf("the worker holding Connection %s does not offer tool %s; add it to its manifest, which the worker reloads on its own (a built-in workspace Tool above its ceiling needs it restarted with --workspace-tools raised).", conn.Name, tool)}
		case a.tools[i].Digest != digest:
			u = &unserved{contract.CodeToolNotAdvertised,
				fmt.Sprintf("the worker holding Connection %s offers tool %s at %s, but it is locked at %s; lock it again at the worker's digest (docket worker --print-tools, docket tool lock).",
					conn.Name, tool, a.tools[i].Digest, digest)}
		default:
			return nil, true, nil
		}
		if first == nil {
			first = u
		}
	}
	if unheard {
		return nil, false, nil
	}
	if first == nil {
		return &unserved{contract.CodeNoLiveWorker,
			fmt.Sprintf("no worker holds Connection %s, which can run tool %s; start one with its key (docket worker).", conn.Name, tool)}, true, nil
	}
	return first, true, nil
}

// explainLogged is [Dispatcher.Explain] for a Poll, at the head the Poll read (-1: none):
// a failure to explain is logged and never fails the worker's call.
func (d *Dispatcher) explainLogged(ctx context.Context, project contract.ProjectID, head int64) {
	if _, err := d.explainAt(ctx, project, head); err != nil && ctx.Err() == nil {
		d.log.WarnContext(ctx, "explaining waiting work failed", logErr, err)
	}
}
