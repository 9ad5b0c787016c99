package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// decideCmd decides a Request: the decision names the digest its decider
// read, so a call that changed since is never the one approved.
type decideCmd struct {
	clientFlags
	Request string `arg:"" help:"The request id (req_…), as docket requests shows it."`
	Verdict string `arg:"" enum:"approve,deny" help:"approve or deny."`
	Digest  string `required:"" help:"The digest you read (sha256:…), as docket requests shows it."`
	Reason  string `help:"Why; a denial's reason reaches the agent."`
}

func (c *decideCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	d := contract.Decision{Digest: c.Digest, Verdict: contract.Verdict(c.Verdict), Reason: c.Reason}
	var r contract.Request
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "requests", c.Request, "decision"), d, &r); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, r)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s %s by %s\n", r.ID, r.State, r.DecidedBy)
	return err
}
