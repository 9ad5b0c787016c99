package operation

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// A pending Request stops taking decisions when its deadline passes, or when the Agent
// that made it is revoked or has its token replaced: whoever holds the Agent now is not
// who asked. From then on a decision is refused request_closed, the listing
// shows it expired, and [Operations.SweepRequests] settles it and its Operation in the
// log, so the Agent is no longer blocked by operation_running.

// DefaultSweepEvery is how often [Operations.Run] sweeps Requests that stopped taking
// decisions.
const DefaultSweepEvery = 5 * time.Second

// closeAgentLocked records that the pending Requests of agent stop taking decisions,
// for why; it runs as the ledger applies the Agent's revocation or token replacement.
func (l *ledgerState) closeAgentLocked(agent, why string) {
	p := contract.NewPrincipal(contract.PrincipalAgent, agent)
	for i, id := range l.order {
		if r := l.requests[id]; r.State == contract.RequestPending && r.RequestedBy == p {
			if _, ok := l.ended[id]; !ok {
				l.ended[id] = why
				l.reqTouched = append(l.reqTouched, i)
			}
		}
	}
}

// voidToolLocked records that the pending Requests naming tool stop taking decisions:
// with unlocked set, every one whose call runs the Tool (tool_unlocked); otherwise, the
// Tool's lock or approval changed, those of its direct Action, raised under the built-in
// release that changed (call_changed). It runs as the ledger applies the Tool's events
// (docs/workers.md, "Direct Actions").
func (l *ledgerState) voidToolLocked(tool string, unlocked bool) {
	why, code := "the Tool "+tool+" was unlocked since the request", contract.CodeToolUnlocked
	if !unlocked {
		why, code = "the lock or the approval of the Tool "+tool+" changed since the request", contract.CodeCallChanged
	}
	for i, id := range l.order {
		r := l.requests[id]
		if r.State != contract.RequestPending || r.Vector.Tool != tool || !unlocked && r.Vector.Action != tool {
			continue
		}
		if _, ok := l.ended[id]; !ok {
			l.ended[id], l.voided[id] = why, code
			l.reqTouched = append(l.reqTouched, i)
		}
	}
}

// endCodeLocked is the code a Request that stopped taking decisions is closed with:
// request_closed, or the code of what voided it.
func (l *ledgerState) endCodeLocked(id contract.RequestID) contract.Code {
	if c, ok := l.voided[id]; ok {
		return c
	}
	return contract.CodeRequestClosed
}

// expiryLocked says why the pending Request r no longer takes a decision at now, or "".
func (l *ledgerState) expiryLocked(r *contract.Request, now time.Time) string {
	return expiryOf(r, l.ended[r.ID], now)
}

// expiryOf says why the pending Request r, which stopped taking decisions for ended
// ("" when it did not: [ledgerState.ended]), no longer takes a decision at now, or "".
func expiryOf(r *contract.Request, ended string, now time.Time) string {
	if r.State != contract.RequestPending {
		return ""
	}
	if ended != "" {
		return ended
	}
	if !now.Before(r.Deadline) {
		return "the request expired before a decision"
	}
	return ""
}

// expire makes req expired and ev its Operation refused, for why; a Request a change of
// its Tool voided (code other than request_closed) is void, under that code.
func expire(req *contract.Request, ev *event.Operation, why string, code contract.Code) {
	req.State, req.DecidedBy, req.DecidedAt, req.Reason = contract.RequestExpired, "", nil, why
	ev.State, ev.Stage, ev.Reason, ev.Decision, ev.Result = contract.OpRefused, "", why, "expired", nil
	ev.ErrorCode = code
	if code != contract.CodeRequestClosed {
		req.State, req.Reason, ev.Decision = contract.RequestVoid, string(code)+": "+why, "void"
	}
}

// SweepRequests settles every Request of every project that no longer takes a decision
// (past its deadline, or its Agent revoked or re-tokened) with its Operation, and
// returns how many it settled. Each is settled in its own write, checked again under
// the write sequence's locks, so a decision or another instance's sweep that came first
// wins and the sweep does nothing.
func (o *Operations) SweepRequests(ctx context.Context) (int, error) {
	ps, err := o.store.Projects(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep requests: %w", err)
	}
	n := 0
	for _, p := range ps {
		project := contract.ProjectID(p.ID)
		due, err := o.dueRequests(ctx, project)
		if err != nil {
			return n, err
		}
		for _, id := range due {
			settled, err := o.expireRequest(ctx, project, id, "")
			if err != nil {
				return n, err
			}
			if settled {
				n++
			}
		}
	}
	return n, nil
}

// dueRequests returns the pending Requests of project that no longer take a decision.
func (o *Operations) dueRequests(ctx context.Context, project contract.ProjectID) ([]contract.RequestID, error) {
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return nil, err
	}
	now := o.nowUTC()
	var out []contract.RequestID
	for _, id := range l.order {
		if l.expiryLocked(l.requests[id], now) != "" {
			out = append(out, id)
		}
	}
	return out, nil
}

// expireRequest settles Request id of project expired, with its Operation refused, when
// it still takes no decision — or, with force set, when it is still pending at all, for
// force (a hook that stopped waiting withdraws its call); it reports whether it did.
func (o *Operations) expireRequest(ctx context.Context, project contract.ProjectID, id contract.RequestID, force string) (bool, error) {
	settled := false
	err := o.boards.Write(ctx, project, "expire "+string(id), func(w *boards.Write) error {
		settled = false
		l := o.ledger(project)
		l.lockAlong(w.Held())
		defer l.unlock()
		// Read at the head the Board was caught up to (a read made during the call): a
		// Request that takes its decision there is left alone with no transaction.
		rctx := eventlog.WithHead(ctx, project, w.Seq())
		if err := l.catchUpLocked(rctx, o.store); err != nil {
			return err
		}
		now := o.nowUTC()
		due := func() (*contract.Request, string) {
			cur, ok := l.requests[id]
			if !ok {
				return nil, ""
			}
			why := l.expiryLocked(cur, now)
			if force != "" && cur.State == contract.RequestPending {
				why = force
			}
			return cur, why
		}
		if _, why := due(); why == "" {
			return nil
		}
		version, _, err := o.inForce(rctx, l, project, contract.PolicyDelegation)
		if err != nil {
			return err
		}
		// Decided again on the ledger caught up under the head lock, so a decision
		// another instance committed meanwhile is never followed by an expiry
		// (docs/architecture.md, "One commit function").
		spec := commitSpec{project: project, lockHead: true, bw: w, at: now, by: contract.Principal("system"),
			wrap: func(err error) error { return eventlog.Refuse(err, "request") }}
		return o.commitLocked(ctx, spec, l, func(wc *workCommit) error {
			settled = false
			cur, why := due()
			if why == "" {
				return nil
			}
			req := *cur
			req.Policy = version
			agent := req.RequestedBy.ID()
			op := l.opLocked(agent, req.Ordinal)
			ev := event.Operation{Agent: agent, Ordinal: req.Ordinal}
			expire(&req, &ev, why, l.endCodeLocked(id))
			if op != nil && op.tool == hookTool {
				ev.ErrorCode = contract.CodeHookUndecided // as the hook answers it (docs/coding-agents.md)
			}
			settled = true
			moved := op == nil || op.state != contract.OpWaitingForDecision || op.decision != string(id)
			wc.writes = append(wc.writes, func(tx store.Tx) error {
				if err := eventlog.Append(ctx, tx, project, req.RequestedBy, now, event.RequestChangedData{Request: req}); err != nil {
					return err
				}
				if moved {
					return nil // the Operation moved on already; only the Request is settled
				}
				return eventlog.Append(ctx, tx, project, req.RequestedBy, now, event.OpChangedData(ev))
			})
			return nil
		})
	})
	if err != nil {
		return false, fmt.Errorf("expire request %s: %w", id, err)
	}
	return settled, nil
}

// Run sweeps Requests ([Operations.SweepRequests]) every sweepEvery until ctx ends, so a
// Request nobody decides settles its Operation and frees its Agent, and then runs the
// authority's own recovery acts ([Operations.SweepRetries]) and places and releases its
// holds on Cases ([Operations.SweepHolds]) where the recovery policy says so. A failed sweep is logged and retried at the next tick; Run returns nil when
// ctx ends.
func (o *Operations) Run(ctx context.Context) error {
	tick := time.NewTicker(o.sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		n, err := o.SweepRequests(ctx)
		if err != nil && ctx.Err() == nil {
			o.log.WarnContext(ctx, "sweep of requests failed; retrying at the next tick", logErr, err)
		}
		if n > 0 {
			o.log.InfoContext(ctx, "requests that no longer take a decision were settled", logRequests, n)
		}
		n, err = o.SweepRetries(ctx)
		if err != nil && ctx.Err() == nil {
			o.log.WarnContext(ctx, "sweep of retries failed; retrying at the next tick", logErr, err)
		}
		if n > 0 {
			o.log.InfoContext(ctx, "the authority acted on failed operations under the recovery policy", logRetries, n)
		}
		n, err = o.SweepHolds(ctx)
		if err != nil && ctx.Err() == nil {
			o.log.WarnContext(ctx, "sweep of the recovery policy's holds failed; retrying at the next tick", logErr, err)
		}
		if n > 0 {
			o.log.InfoContext(ctx, "the recovery policy held or released Cases", logHolds, n)
		}
	}
}
