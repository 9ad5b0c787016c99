package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// RunTask is docket agent run's task when it is pinned to a Case (docs/cli.md): the text
// is posted to the authority as the Agent's own task in conversation, pinned as
// docket task post pins (the authority then refuses the conversation's calls on any
// other Case), and this runtime claims that task, runs it and reports it as docket agent
// serve would, so the task is never left for another runtime to run again. When the run
// ends waiting on Operations and wait is positive, it waits up to wait in all for the
// wake and runs it too. onTool sees each answered call. It returns the task as the
// authority holds it after the last report.
func (rt *Runtime) RunTask(ctx context.Context, conversation, text string, pin contract.CasePin, wait time.Duration, onTool func(agent.ToolCall, agent.ToolResult)) (contract.Task, error) {
	if rt.api == nil {
		return contract.Task{}, &Error{Kind: KindUsage, Err: errors.New("a pinned run posts its task to the authority; leave out --conversation-dir")}
	}
	t, err := rt.api.PostOwnTask(ctx, contract.TaskRequest{Text: text, Conversation: conversation,
		CaseType: pin.CaseType, BusinessKey: pin.BusinessKey, CaseID: pin.CaseID})
	if err != nil {
		return contract.Task{}, rt.Failure(fmt.Errorf("post the task: %w", err))
	}
	rt.onTool = onTool
	defer func() { rt.onTool = nil }()
	deadline := time.Now().Add(wait)
	for first := true; ; first = false {
		poll := min(max(time.Until(deadline), 0), contract.MaxTaskClaimWait)
		if first {
			poll = claimWait
		}
		claim, err := rt.api.ClaimOwnTask(ctx, t.ID, poll)
		if err != nil {
			return t, rt.Failure(fmt.Errorf("claim task %s: %w", t.ID, err))
		}
		if claim.Task == nil {
			if first {
				return t, fmt.Errorf("task %s was posted but could not be claimed within %s; is another runtime of this Agent taking its tasks?", t.ID, claimWait)
			}
			if time.Now().Before(deadline) {
				continue // the wake has not come yet
			}
			return t, nil
		}
		rep, err := rt.runTask(ctx, claim)
		if err != nil {
			return t, err
		}
		if t, err = rt.report(ctx, t.ID, rep); err != nil {
			return t, rt.Failure(fmt.Errorf("report task %s: %w", claim.Task.ID, err))
		}
		if t.State != contract.TaskWaiting || !time.Now().Before(deadline) {
			return t, nil
		}
	}
}
