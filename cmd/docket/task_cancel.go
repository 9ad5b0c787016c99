package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

type taskCancelCmd struct {
	clientFlags
	ID string `arg:"" help:"The task's id (docket task list shows them)."`
}

func (c *taskCancelCmd) Help() string {
	return `A task no runtime took yet ends cancelled at once. A task its runtime runs stops at its
next step: the model request in flight is aborted and no further tool call is sent. An
Operation already admitted is not cancelled: it runs, or waits for a person who approves,
denies or reconciles it, and the task ends cancelled once each has an outcome, its report
naming the Operations that were admitted. A schedule's fire is cancelled by cancelling
its task. Cancelling a task again answers it as it stands; a finished task is refused
task_finished.

Examples:
  docket task cancel t-0123456789abcdef
  docket task cancel t-0123456789abcdef -o json
  docket task show t-0123456789abcdef      # cancelled, with the Operations it admitted`
}

func (c *taskCancelCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	t, err := cl.api.CancelTask(ctx, c.Project, c.ID)
	if err = credential(err); err != nil {
		return err
	}
	return printTask(e, c.json(), t)
}

// writeCancel adds to b who cancelled t and, on its report, the Operations its runs
// admitted.
func writeCancel(b *strings.Builder, t contract.Task) {
	if t.Cancel == nil {
		return
	}
	if t.State.Finished() {
		fmt.Fprintf(b, "  cancelled by %s at %s\n", t.Cancel.By, t.Cancel.At.Format(time.RFC3339))
		if r := t.Result; t.State == contract.TaskCancelled && r != nil && r.ErrorCode == "" && r.Teaching != "" {
			fmt.Fprintf(b, "  %s\n", r.Teaching)
		}
	} else {
		fmt.Fprintf(b, "  cancel asked by %s at %s: its runtime sends no further model request or tool call, and the task ends once its admitted Operations have an outcome\n",
			t.Cancel.By, t.Cancel.At.Format(time.RFC3339))
	}
	if t.Result == nil {
		return
	}
	for _, op := range t.Result.Operations {
		fmt.Fprintf(b, "  admitted %s call %s (operation %d)\n", op.Tool, dash(op.CallID), op.Ordinal)
	}
}
