package main

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// opsCmd lists Operations for a person: what is running or waiting, and why.
type opsCmd struct {
	clientFlags
	Agent   string `help:"Only this Agent's Operations (a name or an id)."`
	Waiting bool   `help:"Only Operations waiting for a worker, a decision or a person."`
}

func (c *opsCmd) Help() string {
	return `Each Operation is one governed tool call of an Agent. STATE is running, waiting_for_decision,
needs_person, done, failed, refused or unknown; WAITING says what an unsettled one waits for:
dispatch (no worker claimed it yet), worker (a worker runs it), decision (docket requests,
docket decide) or person (docket reconcile WORK). REASON says why it cannot proceed.

Examples:
  docket ops                    every Agent's Operations, oldest first
  docket ops --waiting          only what waits, and why
  docket ops --agent calc -o json

After the Operations, each task whose run waits on a model is listed with since when and
its deadline, or as stuck past it; each task waiting on a budget without room, with the
budget's limits, what it spent and how a member raises it; each task whose cancel its
runtime has not taken yet, with who asked and since when; then each enabled Agent whose
runtime (run by docket start for its profile) is not running is listed with why: failed,
restarting or stopped.`
}

func (c *opsCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	ops, err := cl.api.Operations(ctx, c.Project, c.Agent, c.Waiting)
	if err = credential(err); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, ops)
	}
	rows := make([][]string, 0, len(ops))
	for _, op := range ops {
		what := op.Label
		if op.Action != "" && op.CaseID != "" {
			what += " in " + string(op.CaseID)
		}
		reason := op.Reason
		if op.ReasonCode != "" {
			reason = fmt.Sprintf("%s: %s", op.ReasonCode, reason)
		}
		if op.State == contract.OpWaitingForDecision && op.Decision != "" {
			reason = "request " + op.Decision + " waits for a member (docket requests)" + prefixed("; ", reason)
		}
		rows = append(rows, []string{op.Work, agentLabel(op), what, string(op.State), dash(string(op.Waiting)),
			op.Since.Format(time.RFC3339), dash(reason)})
	}
	empty := "no operations in project " + c.Project + "; an Agent's tool calls appear here once it runs"
	if c.Waiting {
		empty = "no operation waits in project " + c.Project + ": nothing needs a worker, a decision or a person"
	}
	if err := writeList(e, []string{"work", "agent", "operation", "state", "waiting", "since", "reason"}, rows, empty); err != nil {
		return err
	}
	if err := c.tasks(ctx, e, cl); err != nil {
		return err
	}
	return c.runtimes(ctx, e, cl)
}

// tasks says, after the Operations, which task's run waits on a model and since when, or
// is stuck past its deadline, which task waits on a budget, and which cancel its runtime
// has not taken: none of them makes an Operation, so each would otherwise look like work
// or like nothing.
func (c *opsCmd) tasks(ctx context.Context, e *env, cl *client) error {
	ws, err := waitingTasks(ctx, cl, c.Project, c.Agent, time.Now())
	if err != nil {
		_, werr := fmt.Fprintf(e.Stderr, "docket ops: the tasks' waits cannot be read: %v\n", err)
		return werr
	}
	for _, w := range ws {
		if _, err := fmt.Fprintf(e.Stdout, "task %s of agent %s: %s\n", w.task.ID, w.task.Agent, w.text); err != nil {
			return err
		}
	}
	return nil
}

// runtimes says, after the Operations, which enabled Agent's runtime is not running and
// why: an Agent whose runtime cannot start makes no Operation, so its silence
// would otherwise look like idleness.
func (c *opsCmd) runtimes(ctx context.Context, e *env, cl *client) error {
	ps, err := cl.api.Profiles(ctx, c.Project)
	if err != nil {
		_, werr := fmt.Fprintf(e.Stderr, "docket ops: the runtimes' states cannot be read: %v\n", err)
		return werr
	}
	for _, p := range ps {
		if !p.Enabled || (c.Agent != "" && c.Agent != p.AgentName && c.Agent != string(p.Agent)) {
			continue
		}
		if p.Runtime != nil && p.Runtime.State == contract.RuntimeRunning {
			continue
		}
		if _, err := fmt.Fprintf(e.Stdout, "runtime of agent %s: %s\n", p.AgentName, runtimeText(p.Runtime)); err != nil {
			return err
		}
	}
	return nil
}

func agentLabel(op contract.OperationInfo) string {
	if op.AgentName != "" {
		return op.AgentName
	}
	return string(op.Agent)
}

// dash shows an empty field as "-", so columns stay aligned and readable.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func prefixed(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}
