package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// reconcileCmd settles an Operation that needs a person with what the member found.
// Nothing is run again.
type reconcileCmd struct {
	clientFlags
	Operation string `arg:"" name:"op" help:"The Operation, <agent>.<ordinal> (its grant's invocation)."`
	Outcome   string `arg:"" enum:"done,failed,unknown" help:"done (it happened), failed (it did not) or unknown."`
	Reason    string `help:"What you checked; required for failed and unknown."`
}

func (c *reconcileCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var out contract.OperationEntry
	in := contract.ReconcileRequest{Outcome: c.Outcome, Reason: c.Reason}
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "operations", c.Operation, "reconcile"), in, &out); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, out)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s %s\n", c.Operation, out.State)
	return err
}
