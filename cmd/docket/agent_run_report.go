package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/contract"
)

// pinFlags is what docket agent run pins its task to: a Case Type and business key, and
// a Case to focus.
type pinFlags struct {
	caseType string
	key      string // as given, parsed by parseKey
	caseID   contract.CaseID
}

func (c *agentRunCmd) pin() (pinFlags, error) {
	p := pinFlags{caseType: c.CaseType, key: c.Key, caseID: contract.CaseID(c.Case)}
	if (p.caseType == "") != (strings.TrimSpace(p.key) == "") {
		return pinFlags{}, errors.New("--case-type and --key pin together: give both, or neither")
	}
	if p != (pinFlags{}) && strings.TrimSpace(c.Task) == "" {
		return pinFlags{}, errors.New("a pinned run posts its TASK; give one (a conversation is resumed without --case-type, --key or --case)")
	}
	if _, err := parseKey(p.key); err != nil {
		return pinFlags{}, err
	}
	return p, nil
}

// plainRun runs text in conversation id over a loop of rt, as it always ran, and says how
// it ended, with the Cases it closed.
func plainRun(ctx context.Context, rt *runner.Runtime, id, text string, wait time.Duration, progress func(agent.ToolCall, agent.ToolResult), e *env) (runner.Event, error) {
	var closed []runner.ClosedCase
	l, err := rt.Loop(func(call agent.ToolCall, r agent.ToolResult) {
		if cc, ok := rt.ClosedCase(id, call, r); ok {
			closed = append(closed, cc)
		}
		progress(call, r)
	}, nil)
	if err != nil {
		return runner.Event{Event: "end", Conversation: id, State: "failed"}, err
	}
	out, err := runner.SendWaiting(ctx, l, id, text, wait, e.Stderr)
	err = runExit(rt.Failure(err), out)
	ev := runner.Event{Event: "end", Conversation: id, State: runState(err), Final: out.Final, Pending: out.Pending, ClosedCases: closed}
	if err != nil {
		ev.ErrorCode, ev.Teaching = contract.CodeOf(err), err.Error()
	}
	return ev, err
}

// pinnedRun posts text as the Agent's own task pinned to pin, runs it and says how it
// ended, as the authority holds it.
func pinnedRun(ctx context.Context, rt *runner.Runtime, id, text string, pin pinFlags, wait time.Duration, progress func(agent.ToolCall, agent.ToolResult)) (runner.Event, error) {
	key, err := parseKey(pin.key)
	if err != nil {
		return runner.Event{}, &usageError{err: err}
	}
	t, err := rt.RunTask(ctx, id, text, contract.CasePin{CaseType: pin.caseType, BusinessKey: key, CaseID: pin.caseID}, wait, progress)
	ev := runner.Event{Event: "end", Conversation: id, Task: t.ID, Pending: t.Waiting}
	if err != nil {
		ev.State, ev.ErrorCode, ev.Teaching = "failed", contract.CodeOf(err), err.Error()
		return ev, err
	}
	if res := t.Result; res != nil {
		ev.Final, ev.ClosedCases = res.Final, res.ClosedCases
		ev.ErrorCode, ev.Teaching = res.ErrorCode, res.Teaching
	}
	switch t.State {
	case contract.TaskCompleted:
		ev.State = "completed"
	case contract.TaskWaiting:
		ev.State = "pending"
		err = runExit(nil, agent.Outcome{Pending: t.Waiting})
	default:
		ev.State = "failed"
		err = fmt.Errorf("task %s %s: %s: %s", t.ID, t.State, ev.ErrorCode, ev.Teaching)
	}
	return ev, err
}

// reportClosed says on stderr which Cases the run closed, each with its root.
func reportClosed(e *env, closed []runner.ClosedCase) {
	for _, cc := range closed {
		fmt.Fprintf(e.Stderr, "docket agent: closed %s %s root %s\n", cc.CaseID, cc.Disposition, dash(cc.Root))
	}
}

// runExit is the run's error, or an exit with exitPending when the run ended with
// writes whose outcome has not come: the task's work is not done.
func runExit(err error, out agent.Outcome) error {
	if err != nil || len(out.Pending) == 0 {
		return err
	}
	tools := make([]string, len(out.Pending))
	for i, p := range out.Pending {
		tools[i] = p.Tool + " " + p.CallID
	}
	return &exitError{code: exitPending, err: fmt.Errorf("the task's work is still pending: %s has no outcome yet (waiting for a decision or still running); resume with --conversation once it settles", strings.Join(tools, ", "))}
}

// runState names how a run ended for -o json.
func runState(err error) string {
	if err == nil {
		return "completed"
	}
	if ee, ok := errors.AsType[*exitError](err); ok && ee.code == exitPending {
		return "pending"
	}
	return "failed"
}
