package task

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// maxFinal bounds the final text of a report, in bytes.
const maxFinal = 256 << 10

// Claim takes the calling Agent's next task under a lease, waiting up to req.WaitMS for
// one: a task posted, a claim that ran out, or a waiting task whose Operations all have an
// outcome (a wake). It answers with no task when the wait runs out. Waiting costs no
// reads: it follows the log with [store.Store.Wait].
func (k *Keeper) Claim(ctx context.Context, c identity.Caller, req contract.TaskClaimRequest) (contract.TaskClaim, error) {
	project, err := agentOnly(c)
	if err != nil {
		return contract.TaskClaim{}, err
	}
	wait := time.Duration(req.WaitMS) * time.Millisecond
	if req.WaitMS < 0 || wait > contract.MaxTaskClaimWait {
		return contract.TaskClaim{}, contract.Errorf(contract.CodeInvalidArgument, "waitMs %d is out of range; wait 0 to %d ms", req.WaitMS, contract.MaxTaskClaimWait.Milliseconds())
	}
	agent := contract.AgentID(c.ID)
	// The poll's bound is wall time; leases are read on the authority's clock.
	deadline := time.Now().Add(wait)
	for {
		claim, head, expiry, err := k.tryClaim(ctx, c, project, agent, req.Task)
		if err != nil || claim.Task != nil {
			return claim, err
		}
		d := time.Until(deadline)
		if d <= 0 {
			return contract.TaskClaim{}, nil
		}
		if !expiry.IsZero() {
			d = min(d, max(expiry.Sub(k.now()), time.Millisecond))
		}
		if err := waitLog(ctx, k.store, project, head, d); err != nil {
			return contract.TaskClaim{}, err
		}
	}
}

// waitLog waits until project's log moves past head or d passes; only ctx's end is an
// error.
func waitLog(ctx context.Context, st store.Store, project contract.ProjectID, head int64, d time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	_, err := st.Wait(wctx, string(project), head)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("wait for tasks: %w", ctx.Err())
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("wait for the log of %s: %w", project, err)
	}
	return nil
}

// tryClaim claims agent's next task when there is one; else it returns the head its
// ledger is caught up to and when the next live claim runs out. It looks for the task in
// memory first, so a claim that finds none writes nothing, and then claims it in the
// write sequence, where another instance may have taken it first.
func (k *Keeper) tryClaim(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, only contract.TaskID) (contract.TaskClaim, int64, time.Time, error) {
	h := k.ledgers.Lock(project)
	defer h.Unlock()
	l, err := h.CatchUp(ctx, k.store)
	if err != nil {
		return contract.TaskClaim{}, 0, time.Time{}, fmt.Errorf("claim a task: %w", eventlog.Refuse(err, "project "+string(project)))
	}
	if only != "" {
		if t, ok := l.tasks[only]; !ok || t.Agent != agent {
			return contract.TaskClaim{}, 0, time.Time{}, contract.Errorf(contract.CodeNotFound, "you have no task %s; claim without naming one to take your next", only)
		}
	}
	var rs rooms
	for _, id := range l.order {
		if t := l.tasks[id]; t.Agent == agent && t.State == contract.TaskWaiting {
			if rs, err = k.readRooms(ctx, project, t.Waiting, rs); err != nil {
				return contract.TaskClaim{}, 0, time.Time{}, fmt.Errorf("claim a task: %w", err)
			}
		}
	}
	t, _, expiry := l.next(agent, only, k.now(), rs)
	if t == nil {
		return contract.TaskClaim{}, h.Seq(), expiry, nil
	}
	var out contract.TaskClaim
	err = h.Update(ctx, func(tx store.Tx, l *ledger) error {
		now := k.nowUTC()
		t, wake, _ := l.next(agent, only, now, rs)
		if t == nil {
			return nil // another instance took it first; the caller waits again
		}
		d := event.TaskClaimedData{Task: t.ID, Attempt: t.Attempt + 1, LeaseUntil: now.Add(k.lease), Wake: wake}
		v := *t
		v.State, v.Attempt, v.LeaseUntil, v.RunWait, v.UpdatedAt = contract.TaskClaimed, d.Attempt, &d.LeaseUntil, nil, now
		out = contract.TaskClaim{Task: &v, Wake: wake}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, d)
	})
	// A claim the log holds is the runtime's, though a State here did not apply it: an
	// error would leave the task claimed under a lease no runtime holds.
	if err = eventlog.Committed(ctx, k.log, project, err); err != nil {
		return contract.TaskClaim{}, 0, time.Time{}, fmt.Errorf("claim a task: %w", eventlog.Refuse(err, "project "+string(project)))
	}
	if out.Task == nil {
		return contract.TaskClaim{}, h.Seq(), expiry, nil
	}
	return out, 0, time.Time{}, nil
}

// readRooms adds to rs (made when nil) whether each budget of ws not in it yet has room
// now, and returns it. A budget's room is not in the log — it changes without an event
// of the task's own (a window turns) — so it is not the ledger's: it is read at each
// call that needs it, and a claim's long-poll ends within [contract.MaxTaskClaimWait],
// so the next one reads it again.
func (k *Keeper) readRooms(ctx context.Context, project contract.ProjectID, ws []contract.TaskWait, rs rooms) (rooms, error) {
	for _, w := range ws {
		if _, read := rs[w.Budget]; w.Budget == "" || read {
			continue
		}
		room := true
		if k.room != nil {
			var err error
			if room, err = k.room(ctx, project, w.Budget); err != nil {
				return nil, fmt.Errorf("read budget %s: %w", w.Budget, err)
			}
		}
		if rs == nil {
			rs = rooms{}
		}
		rs[w.Budget] = room
	}
	return rs, nil
}

// Renew extends the lease of the calling Agent's claim of task id, attempt r.Attempt.
// r.Wait, when set, is what the run waits on, kept on the task where a person looks.
func (k *Keeper) Renew(ctx context.Context, c identity.Caller, id contract.TaskID, r contract.TaskRenewal) (contract.Task, error) {
	if r.Wait != nil {
		if err := contract.CheckTaskRunWait(*r.Wait); err != nil {
			return contract.Task{}, err
		}
	}
	wait := time.Duration(r.WaitMS) * time.Millisecond
	if r.WaitMS < 0 || wait > contract.MaxTaskClaimWait {
		return contract.Task{}, contract.Errorf(contract.CodeInvalidArgument, "waitMs %d is out of range; hold a renewal 0 to %d ms", r.WaitMS, contract.MaxTaskClaimWait.Milliseconds())
	}
	t, err := k.change(ctx, c, id, "renew", func(tx store.Tx, l *ledger, t *contract.Task, now time.Time) (contract.Task, error) {
		if err := held(t, r.Attempt); err != nil {
			return contract.Task{}, err
		}
		d := event.TaskClaimedData{Task: id, Attempt: t.Attempt, LeaseUntil: now.Add(k.lease), Wake: l.wake[id], Wait: r.Wait}
		v := *t
		v.LeaseUntil, v.RunWait, v.UpdatedAt = &d.LeaseUntil, r.Wait, now
		return v, eventlog.Append(ctx, tx, t.Project, c.Principal(), now, d)
	})
	if err != nil || wait == 0 || t.Cancel != nil {
		return t, err
	}
	return k.holdRenewal(ctx, t.Project, t.Agent, id, r.Attempt, t, wait)
}

// Report records how the calling Agent's run of task id ended. A report that repeats the
// last one of the same attempt is answered with the task as it stands, so a runtime that
// lost the answer may send it again.
func (k *Keeper) Report(ctx context.Context, c identity.Caller, id contract.TaskID, r contract.TaskReport) (contract.Task, error) {
	if err := checkReport(r); err != nil {
		return contract.Task{}, err
	}
	return k.change(ctx, c, id, "report", func(tx store.Tx, l *ledger, t *contract.Task, now time.Time) (contract.Task, error) {
		if t.Attempt == r.Attempt && t.State == r.State && t.Result != nil &&
			reflect.DeepEqual(*t.Result, r.TaskResult) && reflect.DeepEqual(t.Waiting, r.Waiting) {
			return *t, nil
		}
		if err := held(t, r.Attempt); err != nil {
			return contract.Task{}, err
		}
		if err := checkCancelReport(t, r); err != nil {
			return contract.Task{}, err
		}
		v := *t
		res := r.TaskResult
		v.State, v.Waiting, v.Result, v.LeaseUntil, v.RunWait, v.UpdatedAt = r.State, r.Waiting, &res, nil, nil, now
		if err := eventlog.Append(ctx, tx, t.Project, c.Principal(), now, event.TaskReportedData{Task: id, TaskReport: r}); err != nil {
			return contract.Task{}, err
		}
		// An asked task's end settles the docket.ask that posted it (ask.go).
		return v, settleAsk(ctx, tx, l, t, r.State, r.TaskResult, c.Principal(), now)
	})
}

func checkReport(r contract.TaskReport) error {
	switch {
	case r.State != contract.TaskWaiting && r.State != contract.TaskCompleted && r.State != contract.TaskFailed && r.State != contract.TaskCancelled:
		return contract.Errorf(contract.CodeInvalidArgument, "a report's state is completed, failed, cancelled or waiting, not %q", r.State)
	case (r.State == contract.TaskWaiting) != (len(r.Waiting) > 0):
		return contract.Errorf(contract.CodeInvalidArgument, "a report is waiting exactly when it names the Operations it waits on; send state waiting with them, or completed or failed without")
	case len(r.Final) > maxFinal || len(r.Teaching) > maxFinal:
		return contract.Errorf(contract.CodeInvalidArgument, "the report's text is over %d bytes; cut the final answer", maxFinal)
	case r.ClosedCases == nil:
		return contract.Errorf(contract.CodeInvalidArgument, "a report lists closedCases, empty when the run closed none")
	}
	for _, w := range r.Waiting {
		if w.Budget != "" {
			if w.Tool != "" || w.CallID != "" || w.Ordinal != 0 || w.After != 0 {
				return contract.Errorf(contract.CodeInvalidArgument, "a wait on a budget names the budget alone, no call, tool or ordinal")
			}
			if err := contract.CheckBudgetName(w.Budget); err != nil {
				return err
			}
			continue
		}
		if w.Tool == "" || w.Ordinal < 0 || w.After < 0 {
			return contract.Errorf(contract.CodeInvalidArgument, "each Operation waited on names its tool and a non-negative ordinal or after")
		}
	}
	for _, op := range r.Operations {
		if op.Tool == "" || op.Ordinal <= 0 {
			return contract.Errorf(contract.CodeInvalidArgument, "each Operation a report lists names its tool and its ordinal")
		}
	}
	for _, cc := range r.ClosedCases {
		if cc.CaseID == "" {
			return contract.Errorf(contract.CodeInvalidArgument, "each closed Case names its caseId")
		}
		if _, err := contract.ParseDisposition(string(cc.Disposition)); err != nil {
			return err
		}
	}
	return nil
}

// held refuses a change by a runtime whose claim is not the task's current one.
func held(t *contract.Task, attempt int) error {
	if t.State != contract.TaskClaimed || t.Attempt != attempt {
		return contract.Errorf(contract.CodeTaskNotClaimed, "task %s is %s at attempt %d, not claimed by your attempt %d; claim again to take your next task", t.ID, t.State, t.Attempt, attempt)
	}
	return nil
}

// change runs fn on task id of the calling Agent in the write sequence of its project's
// ledger.
func (k *Keeper) change(ctx context.Context, c identity.Caller, id contract.TaskID, what string, fn func(store.Tx, *ledger, *contract.Task, time.Time) (contract.Task, error)) (contract.Task, error) {
	project, err := agentOnly(c)
	if err != nil {
		return contract.Task{}, err
	}
	var out contract.Task
	err = k.ledgers.Write(ctx, project, func(tx store.Tx, l *ledger) error {
		t, ok := l.tasks[id]
		if !ok || string(t.Agent) != c.ID {
			return contract.Errorf(contract.CodeNotFound, "you have no task %s", id)
		}
		var err error
		out, err = fn(tx, l, t, k.nowUTC())
		return err
	})
	if err != nil {
		return contract.Task{}, fmt.Errorf("%s task %s: %w", what, id, eventlog.Refuse(err, "task "+string(id)))
	}
	return out, nil
}

// WaitOperations waits up to bound until each of the calling Agent's Operations in ws has
// an outcome (settled, or needing a person), following the log; it reports whether all
// did. The strip stays the source of the outcomes themselves.
func (k *Keeper) WaitOperations(ctx context.Context, c identity.Caller, ws []contract.TaskWait, bound time.Duration) (bool, error) {
	project, err := agentOnly(c)
	if err != nil {
		return false, err
	}
	if bound < 0 || bound > contract.MaxTaskClaimWait {
		return false, contract.Errorf(contract.CodeInvalidArgument, "waitMs is out of range; wait 0 to %d ms", contract.MaxTaskClaimWait.Milliseconds())
	}
	deadline := time.Now().Add(bound)
	for {
		done, head, err := k.reported(ctx, project, contract.AgentID(c.ID), ws)
		if err != nil {
			return false, fmt.Errorf("wait for operations: %w", err)
		}
		d := time.Until(deadline)
		if done || d <= 0 {
			return done, nil
		}
		if err := waitLog(ctx, k.store, project, head, d); err != nil {
			return false, err
		}
	}
}

// reported reports whether each of ws of agent has an outcome, or room for a budget
// ([ledger.reported]), and the head the ledger is caught up to.
func (k *Keeper) reported(ctx context.Context, project contract.ProjectID, agent contract.AgentID, ws []contract.TaskWait) (bool, int64, error) {
	h := k.ledgers.Lock(project)
	defer h.Unlock()
	l, err := h.CatchUp(ctx, k.store)
	if err != nil {
		return false, 0, eventlog.Refuse(err, "project "+string(project))
	}
	rs, err := k.readRooms(ctx, project, ws, nil)
	if err != nil {
		return false, 0, err
	}
	return l.reported(agent, ws, rs), h.Seq(), nil
}

// Pin returns what conversation id of the calling Agent is held to: the Case Type and
// key its tasks pinned, and the Case they brought into focus; the zero CasePin when none.
// by names who posted its tasks, first posts first: a Request a call of the conversation
// raises records them, so a decider sees whose words led to it.
func (k *Keeper) Pin(ctx context.Context, c identity.Caller, id contract.ConversationID) (pin contract.CasePin, by []contract.Principal, err error) {
	project, err := agentOnly(c)
	if err != nil {
		return contract.CasePin{}, nil, err
	}
	// Every tool call of a conversation asks, so it answers from what the ledger
	// published when that covers the head the call carries or reads once, and never
	// waits for a write of another part of the project's log holding the lock across
	// its transaction (a claim batch: docs/architecture.md, "The project state and its
	// driver"); otherwise it locks and catches up to that head.
	key := convKey{contract.AgentID(c.ID), id}
	head, ok := eventlog.KnownHead(ctx, project)
	if !ok {
		h, err := k.store.Head(ctx, string(project))
		if err != nil {
			return contract.CasePin{}, nil, fmt.Errorf("read the pin of conversation %s: read the head: %w", id, eventlog.Refuse(err, "project "+string(project)))
		}
		head = h.Seq
	}
	if snap, ok := k.ledgers.Snapshot(project); ok && snap.Seq >= head {
		v := snap.Value.(*pinView)
		return v.pins[key], slices.Clone(v.authors[key]), nil
	}
	h := k.ledgers.Lock(project)
	defer h.Unlock()
	l, err := h.CatchUpTo(ctx, k.store, head)
	if err != nil {
		return contract.CasePin{}, nil, fmt.Errorf("read the pin of conversation %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	return l.pins[key], slices.Clone(l.authors[key]), nil
}
