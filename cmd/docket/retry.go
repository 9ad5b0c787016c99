package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// retryCmd runs a failed Operation again as a new one, or re-queues work a worker
// refused (docs/policies.md): a member's recovery act, recorded with the
// recovery policy version in force.
type retryCmd struct {
	clientFlags
	Operation string `arg:"" help:"The failed Operation, <agent id>.<ordinal>, as docket ops shows it."`
	Reason    string `required:"" help:"Why it should run again."`
}

func (c *retryCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var out contract.RecoveryOutcome
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "operations", c.Operation, "retry"), contract.RetryRequest{Reason: c.Reason}, &out); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, out)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s %s as %s (attempt %d, recovery policy version %d)\n", out.Act, out.Operation, out.Retry, out.Attempt, out.Policy)
	return err
}
