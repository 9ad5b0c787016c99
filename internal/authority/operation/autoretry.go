package operation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
	"github.com/docketrun/docket/internal/store"
)

// Under a recovery policy with retry_by = "authority" the authority retries failed
// Operations itself: its sweep takes each Agent's latest Operation that
// failed — a known failure of an executed Action, not a worker's refusal, which would
// only be refused again — since the policy in force was published, and retries it as a
// new Operation while the policy allows; past it (max_attempts reached, retries off, a
// call a person approved) it records once that it does not retry. Each act is a
// recovery event whose actor is the authority.

// authorityActor is the actor of the authority's own recovery acts.
const authorityActor contract.Principal = "authority"

// authorityReason is the reason the authority's recovery acts give.
const authorityReason = "the recovery policy in force has the authority retry known failures (retry_by = \"authority\")"

// SweepRetries runs the authority's own recovery acts in every project whose recovery
// policy in force says retry_by = "authority", and returns how many acts (retries and
// records that it does not retry) it made. Each act runs in its own write, checked again
// under the write sequence's locks, so an act another instance or an orchestrator made
// first wins and the sweep does nothing.
func (o *Operations) SweepRetries(ctx context.Context) (int, error) {
	if o.policies == nil {
		return 0, nil // the built-in recovery policy leaves recovery to orchestrators and members
	}
	ps, err := o.store.Projects(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep retries: %w", err)
	}
	n := 0
	for _, p := range ps {
		project := contract.ProjectID(p.ID)
		v, d, err := o.policies.InForce(ctx, project, contract.PolicyRecovery)
		if err != nil {
			return n, err
		}
		if d.Recovery == nil || d.Recovery.RetryBy != policydoc.RetryByAuthority || v.PublishedAt == nil {
			continue
		}
		due, err := o.retriesDue(ctx, project, *v.PublishedAt)
		if err != nil {
			return n, err
		}
		for _, ref := range due {
			acted, err := o.authorityRetry(ctx, project, ref)
			if err != nil {
				return n, err
			}
			if acted {
				n++
			}
		}
	}
	return n, nil
}

// retriesDue returns, as opRefs, the latest Operation of each Agent of project that the
// authority may act on: failed at or after since, and not yet given up on.
func (o *Operations) retriesDue(ctx context.Context, project contract.ProjectID, since time.Time) ([]string, error) {
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return nil, err
	}
	var out []string
	for _, agent := range slices.Sorted(maps.Keys(l.ops)) {
		if op := l.authorityCandidateLocked(agent, since); op != nil {
			out = append(out, opRef(agent, op.ordinal))
		}
	}
	return out, nil
}

// authorityCandidateLocked returns the agent's latest Operation when it is a known
// failure of an executed Action, not a worker's refusal, that settled at or after since
// and the authority has not given up on; else nil. The project's ledger must be locked.
func (l *ledgerState) authorityCandidateLocked(agent string, since time.Time) *operation {
	ops := l.ops[agent]
	if len(ops) == 0 {
		return nil
	}
	op := ops[len(ops)-1]
	if op.state != contract.OpFailed || op.execution == nil || op.errorCode == contract.CodeWorkRefused ||
		op.since.Before(since) || l.gaveUp[opRef(agent, op.ordinal)] {
		return nil
	}
	return op
}

// authorityRetry is the authority's recovery act on ref: a retry when the recovery
// policy in force allows it, else a recovery.refused event saying why it does not
// retry, recorded once. It reports whether it recorded either; an Operation that moved
// since the sweep read it is left alone.
func (o *Operations) authorityRetry(ctx context.Context, project contract.ProjectID, ref string) (bool, error) {
	agent, ordinal, err := parseOpRef(ref)
	if err != nil {
		return false, err
	}
	acted := false
	err = o.boards.Write(ctx, project, "authority retry "+ref, func(w *boards.Write) error {
		acted = false
		l := o.ledger(project)
		l.lockAlong(w.Held())
		defer l.unlock()
		// The policy in force is read before the transaction, at the head the Board was
		// caught up to; the act is decided on the ledger caught up inside the
		// transaction, under the head lock (docs/architecture.md, "One commit function").
		v, d, err := o.policies.InForceAlong(l.held, contract.PolicyRecovery)
		if err != nil {
			return err
		}
		if d.Recovery == nil || d.Recovery.RetryBy != policydoc.RetryByAuthority || v.PublishedAt == nil {
			return nil // another policy came into force since the sweep read it
		}
		now := o.nowUTC()
		spec := commitSpec{project: project, lockHead: true, bw: w, at: now, by: authorityActor,
			wrap: func(err error) error { return eventlog.Refuse(err, "recovery") }}
		return o.commitLocked(ctx, spec, l, func(wc *workCommit) error {
			acted = false
			op := l.authorityCandidateLocked(agent, *v.PublishedAt)
			if op == nil || op.ordinal != ordinal || l.retryableLocked(agent, op) != nil {
				return nil // the Operation moved, or someone acted on it first
			}
			attempt := op.attempt + 1
			rec := event.Recovery{Act: actRetry, Operation: ref, Actor: authorityActor, Reason: authorityReason, Policy: v.Version}
			acted = true
			if why := l.outsidePolicyLocked(agent, op, actRetry, attempt, d.Recovery, v.Version); why != "" {
				rec.Result = "not retried: " + why
				return wc.event("", string(authorityActor), event.RecoveryRefusedData(rec))
			}
			next := int64(len(l.ops[agent])) + 1
			rec.Result = "retried as " + opRef(agent, next)
			retry := retryOp(agent, next, ordinal, attempt, op)
			wc.writes = append(wc.writes, func(tx store.Tx) error {
				return appendRetry(ctx, tx, project, authorityActor, now, retry, rec)
			})
			return nil
		})
	})
	if err != nil {
		return false, fmt.Errorf("authority retry %s: %w", ref, err)
	}
	return acted, nil
}
