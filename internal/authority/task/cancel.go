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
	l := k.ledger(project)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out contract.Task
	err := k.store.Update(ctx, func(tx store.Tx) error {
		if err := l.lockCaughtUp(ctx, tx, project); err != nil {
			return err
		}
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
		now := k.nowUTC()
		cancel := contract.TaskCancel{By: c.Principal(), At: now}
		if err := eventlog.Append(ctx, tx, project, c.Principal(), now, event.TaskCancelRequestedData{Task: id, TaskCancel: cancel}); err != nil {
			return err
		}
		v := *t
		v.Cancel, v.UpdatedAt = &cancel, now
		if t.State == contract.TaskQueued {
			// No runtime holds it, and none ran it: nothing ran, so nothing is left to wait for.
			rep := contract.TaskReport{Attempt: t.Attempt, State: contract.TaskCancelled, TaskResult: contract.TaskResult{
				Teaching:    fmt.Sprintf("cancelled by %s before a runtime took it; nothing of it ran", cancel.By),
				ClosedCases: []contract.ClosedCase{}}}
			res := rep.TaskResult
			v.State, v.Result, v.LeaseUntil, v.RunWait = contract.TaskCancelled, &res, nil, nil
			if err := eventlog.Append(ctx, tx, project, c.Principal(), now, event.TaskReportedData{Task: id, TaskReport: rep}); err != nil {
				return err
			}
		}
		out = v
		return nil
	})
	if err != nil {
		return contract.Task{}, fmt.Errorf("cancel task %s: %w", id, eventlog.Refuse(err, "project "+string(project)))
	}
	return out, nil
}

// applyCancel records a cancel asked for in event e on its task. l.mu must be held.
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
	l := k.ledger(project)
	out := renewed
	for {
		l.mu.Lock()
		err := l.catchUpLocked(ctx, k.store, project)
		t, ok := l.tasks[id]
		head := l.cursor.Seq()
		if err == nil && ok && t.Agent == agent {
			out = k.view(t)
		}
		l.mu.Unlock()
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
