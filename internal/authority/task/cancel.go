package task

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Cancel asks, for a member of project (or its delegate), that task id end: a task no
// runtime claimed yet ends cancelled at once; a claimed or waiting one is marked, and its
// runtime — which learns of it from its lease renewal, or from the wake that hands it the
// task — sends no further model request or tool call and reports it cancelled once the
// Operations its runs admitted have an outcome. An admitted Operation is never cancelled
// here. A task already cancelled, or asked to be, is answered as it stands; a finished
// one is refused task_finished.
func (k *Keeper) Cancel(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.Task, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Task{}, err
	}
	var out contract.Task
	err := k.ledgers.Write(ctx, project, func(tx store.Tx, l *ledger) error {
		t, ok := l.tasks[id]
		if !ok {
			return contract.Errorf(contract.CodeNotFound, "project %s has no task %s; docket task list shows its tasks", project, id)
		}
		if t.Cancel != nil || t.State == contract.TaskCancelled {
			out = k.view(t)
			return nil
		}
		if t.State.Finished() {
			return contract.Errorf(contract.CodeTaskFinished, "task %s already ended %s, and there is nothing left to cancel; docket task show %s shows how", id, t.State, id)
		}
		cancel := contract.TaskCancel{By: c.Principal(), At: k.nowUTC()}
		if err := k.cancelOne(ctx, tx, l, t, cancel); err != nil {
			return err
		}
		out = cancelled(t, cancel)
		// The tasks it asked for are cancelled with it (docs/agents.md).
		return k.cascade(ctx, tx, l, id, cancel)
	})
	if err != nil {
		return contract.Task{}, fmt.Errorf("cancel task %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	return out, nil
}

// cancelOne appends, in tx, the cancel of open task t: a task no runtime claimed yet ends
// cancelled at once, and the docket.ask that posted it, if any, settles. l is caught up
// to tx.
func (k *Keeper) cancelOne(ctx context.Context, tx store.Tx, l *ledger, t *contract.Task, cancel contract.TaskCancel) error {
	if err := eventlog.Append(ctx, tx, t.Project, cancel.By, cancel.At, event.TaskCancelRequestedData{Task: t.ID, TaskCancel: cancel}); err != nil {
		return err
	}
	if t.State != contract.TaskQueued {
		return nil
	}
	// No runtime holds it, and none ran it: nothing ran, so nothing is left to wait for.
	rep := queuedCancel(t, cancel)
	if err := eventlog.Append(ctx, tx, t.Project, cancel.By, cancel.At, event.TaskReportedData{Task: t.ID, TaskReport: rep}); err != nil {
		return err
	}
	return settleAsk(ctx, tx, l, t, contract.TaskCancelled, rep.TaskResult, cancel.By, cancel.At)
}

// queuedCancel is the report of a queued task's cancel.
func queuedCancel(t *contract.Task, cancel contract.TaskCancel) contract.TaskReport {
	return contract.TaskReport{Attempt: t.Attempt, State: contract.TaskCancelled, TaskResult: contract.TaskResult{
		Teaching:    fmt.Sprintf("cancelled by %s before a runtime took it; nothing of it ran", cancel.By),
		ClosedCases: []contract.ClosedCase{}}}
}

// cancelled is t as its cancel leaves it.
func cancelled(t *contract.Task, cancel contract.TaskCancel) contract.Task {
	v := *t
	v.Cancel, v.UpdatedAt = &cancel, cancel.At
	if t.State == contract.TaskQueued {
		res := queuedCancel(t, cancel).TaskResult
		v.State, v.Result, v.LeaseUntil, v.RunWait = contract.TaskCancelled, &res, nil, nil
	}
	return v
}

// applyCancel records a cancel asked for in event e on its task.
func (l *ledger) applyCancel(e store.Event, d event.TaskCancelRequestedData) error {
	t, ok := l.tasks[d.Task]
	if !ok {
		return fmt.Errorf("event %d cancels task %s, which was never posted", e.Seq, d.Task)
	}
	cancel := d.TaskCancel
	t.Cancel, t.UpdatedAt = &cancel, e.At
	return nil
}

// holdRenewal holds a renewal's answer, after the lease is renewed, until task id of
// agent is asked to be cancelled, is no longer claimed by attempt, or wait passes; it
// answers the task as it then stands. Waiting costs no reads: it follows the log.
func (k *Keeper) holdRenewal(ctx context.Context, project contract.ProjectID, agent contract.AgentID, id contract.TaskID, attempt int, renewed contract.Task, wait time.Duration) (contract.Task, error) {
	deadline := time.Now().Add(wait)
	out := renewed
	for {
		h := k.ledgers.Lock(project)
		l, err := h.CatchUp(ctx, k.store)
		if err == nil {
			if t, ok := l.tasks[id]; ok && t.Agent == agent {
				out = k.view(t)
			}
		}
		head := h.Seq()
		h.Unlock()
		if err != nil {
			return contract.Task{}, fmt.Errorf("renew task %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
		}
		d := time.Until(deadline)
		if out.Cancel != nil || out.State != contract.TaskClaimed || out.Attempt != attempt || d <= 0 {
			return out, nil
		}
		if err := waitLog(ctx, k.store, project, head, d); err != nil {
			return contract.Task{}, err
		}
	}
}

// checkCancelReport refuses a report of state cancelled for a task no member asked to
// cancel: only a person's cancel ends a task so.
func checkCancelReport(t *contract.Task, r contract.TaskReport) error {
	if r.State == contract.TaskCancelled && t.Cancel == nil {
		return contract.Errorf(contract.CodeInvalidArgument, "task %s was not asked to be cancelled; report it completed, failed or waiting", t.ID)
	}
	return nil
}
