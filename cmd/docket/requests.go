package main

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/apiclient"

	"github.com/docketrun/docket/internal/contract"
)

// requestsCmd lists the calls waiting for a person's decision, each with
// the exact canonical vector its digest covers.
type requestsCmd struct {
	clientFlags
	All bool `help:"Show decided, void and expired requests too."`
}

func (c *requestsCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Request](ctx, cl, projectPath(c.Project, "requests"))
	if err != nil {
		return err
	}
	rs := []contract.Request{}
	for _, r := range items {
		if c.All || r.State == contract.RequestPending {
			rs = append(rs, r)
		}
	}
	if c.json() {
		return printJSON(e.Stdout, rs)
	}
	if len(rs) == 0 {
		_, err := fmt.Fprintln(e.Stdout, "no requests waiting")
		return err
	}
	for _, r := range rs {
		canon, err := apiclient.CanonicalVector(r.Vector)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(e.Stdout, "%s  %s  by %s  deadline %s\n  digest %s\n  vector %s\n",
			r.ID, r.State, r.RequestedBy, r.Deadline.Format("2006-01-02T15:04:05Z"), r.Digest, canon); err != nil {
			return err
		}
		if r.MemberOnly != "" {
			if _, err := fmt.Fprintf(e.Stdout, "  only a member decides it: %s\n", r.MemberOnly); err != nil {
				return err
			}
		}
	}
	return nil
}
