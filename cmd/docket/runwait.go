package main

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// runWaitText says what task t's run waits on, as its runtime last reported it, and
// whether it is stuck: past its deadline, when the runtime no longer renews the claim
// (docs/workbench.md, Model deadlines). "" when t's run waits on nothing it reported.
func runWaitText(t contract.Task, now time.Time) (text string, stuck bool) {
	w := t.RunWait
	if w == nil {
		return "", false
	}
	if w.Phase == contract.RunWaitRetry {
		return contract.RetryWaitText(*w, now), false
	}
	what := "the first byte of its answer"
	if w.Phase == contract.RunWaitIdle {
		what = "more of its answer"
	}
	stuck = !now.Before(w.Deadline)
	if stuck {
		return fmt.Sprintf("stuck: its run waited on the model at %s for %s since %s, past its deadline %s; the runtime no longer renews its lease",
			w.Origin, what, w.Since.Format(time.RFC3339), w.Deadline.Format(time.RFC3339)), true
	}
	return fmt.Sprintf("its run waits on the model at %s for %s since %s (deadline %s)",
		w.Origin, what, w.Since.Format(time.RFC3339), w.Deadline.Format(time.RFC3339)), false
}

// waitingTasks are project's tasks (of agent, when set) that would otherwise go silent,
// each with its line (docs/workbench.md, Nothing goes silent): a run waiting on a model,
// as its runtime last reported; a task waiting on a budget without room, with the
// budget's limits, what it spent and who raises it; and a cancel a member asked for that
// the task's runtime has not taken yet, since when.
func waitingTasks(ctx context.Context, cl *client, project, agent string, now time.Time) ([]taskWait, error) {
	ts, err := cl.api.Tasks(ctx, project, agent)
	if err = credential(err); err != nil {
		return nil, err
	}
	var budgets map[string]contract.Budget
	var budgetsErr error
	var out []taskWait
	for _, t := range ts {
		if text, stuck := runWaitText(t, now); text != "" {
			out = append(out, taskWait{task: t, text: text, stuck: stuck})
		}
		for _, w := range t.Waiting {
			if w.Budget == "" {
				continue
			}
			if budgets == nil && budgetsErr == nil {
				// A caller who may not read budgets (a delegate) still learns of the wait.
				var bs []contract.Budget
				bs, budgetsErr = cl.api.Budgets(ctx, project, "")
				budgets = make(map[string]contract.Budget, len(bs))
				for _, b := range bs {
					budgets[b.Name] = b
				}
			}
			if budgetsErr != nil {
				out = append(out, taskWait{task: t, text: fmt.Sprintf("waits on budget %s, whose figures cannot be read (%v); a member of the project raises or resets it (docket budget set %s …)", w.Budget, budgetsErr, w.Budget)})
				continue
			}
			b, ok := budgets[w.Budget]
			out = append(out, taskWait{task: t, text: budgetWaitText(w.Budget, b, ok)})
		}
		if t.Cancel != nil && !t.State.Finished() {
			out = append(out, taskWait{task: t, text: cancelWaitText(t, now)})
		}
	}
	return out, nil
}

// budgetWaitText says what a task waiting on budget name waits for: the budget b (ok
// when it is still set), its limits and spend, and who lets the task go on.
func budgetWaitText(name string, b contract.Budget, ok bool) string {
	if !ok {
		return fmt.Sprintf("waits on budget %s, which is no longer set: the task goes on at its runtime's next claim", name)
	}
	held := ""
	if b.Spend.HeldTokens > 0 || b.Spend.HeldUSD > 0 {
		held = fmt.Sprintf(", %d tokens (%s) held for requests in flight", b.Spend.HeldTokens, usd(b.Spend.HeldUSD))
	}
	return fmt.Sprintf("waits on budget %s (%s, %s, %s): spent %s%s; a member of the project raises or resets it (docket budget set %s …), else its window turns; last set by %s",
		b.Name, budgetState(b), budgetScope(b), budgetWindow(b), budgetUse(b), held, b.Name, b.SetBy)
}

// cancelWaitText says of task t, whose cancel its runtime has not taken yet, who asked
// for the cancel and since when, and what the task still waits for to end cancelled.
func cancelWaitText(t contract.Task, now time.Time) string {
	var rest string
	switch t.State {
	case contract.TaskClaimed:
		rest = "its runtime has not stopped the run yet; it learns of the cancel at its next lease renewal"
		if t.LeaseUntil != nil && !now.Before(*t.LeaseUntil) {
			rest = fmt.Sprintf("its runtime has not renewed the claim since it ran out at %s (stopped, or stuck on the model); the task is taken again and ends cancelled", t.LeaseUntil.Format(time.RFC3339))
		}
	case contract.TaskWaiting:
		rest = "it ends cancelled once its runtime takes it again and the Operations its runs admitted have an outcome"
	default:
		rest = "it ends cancelled once its runtime takes it"
	}
	return fmt.Sprintf("cancel asked by %s at %s (%s ago), not yet taken by its runtime: %s",
		t.Cancel.By, t.Cancel.At.Format(time.RFC3339), max(now.Sub(t.Cancel.At), 0).Round(time.Second), rest)
}

// taskWait is one task that waits, and its line.
type taskWait struct {
	task  contract.Task
	text  string
	stuck bool
}
