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
  docket ops --agent calc -o json`
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
	return writeList(e, []string{"work", "agent", "operation", "state", "waiting", "since", "reason"}, rows, empty)
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
