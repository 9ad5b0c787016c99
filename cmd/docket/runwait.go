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

// waitingTasks are project's tasks (of agent, when set) whose run waits on a model, as
// their runtimes last reported, each with its line.
func waitingTasks(ctx context.Context, cl *client, project, agent string, now time.Time) ([]taskWait, error) {
	ts, err := cl.api.Tasks(ctx, project, agent)
	if err = credential(err); err != nil {
		return nil, err
	}
	var out []taskWait
	for _, t := range ts {
		if text, stuck := runWaitText(t, now); text != "" {
			out = append(out, taskWait{task: t, text: text, stuck: stuck})
		}
	}
	return out, nil
}

// taskWait is one task whose run waits on a model.
type taskWait struct {
	task  contract.Task
	text  string
	stuck bool
}
