package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// caseCmd reads a project's Cases (DESIGN.md §3.4).
type caseCmd struct {
	List caseListCmd `cmd:"" help:"List the project's Cases."`
	Show caseShowCmd `cmd:"" help:"Show one Case."`
}

type caseListCmd struct {
	clientFlags
}

func (c *caseListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var page contract.Page[contract.Case]
	if err := cl.do(ctx, http.MethodGet, projectPath(c.Project, "cases"), nil, &page); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, page.Items)
	}
	for _, cs := range page.Items {
		fmt.Fprintf(e.Stdout, "%s\t%s\t%s\t%s\n", cs.CaseID, cs.CaseType, cs.Status, cs.Disposition)
	}
	return nil
}

type caseShowCmd struct {
	clientFlags
	ID string `arg:"" name:"case" help:"Case id."`
}

func (c *caseShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var cs contract.Case
	if err := cl.do(ctx, http.MethodGet, projectPath(c.Project, "cases", c.ID), nil, &cs); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, cs)
	}
	fmt.Fprintf(e.Stdout, "case %s (%s)\nstatus %s", cs.CaseID, cs.CaseType, cs.Status)
	if cs.Disposition != "" {
		fmt.Fprintf(e.Stdout, ", %s", cs.Disposition)
	}
	fmt.Fprintf(e.Stdout, "\nroot %s\nrelease %s (%s)\nopened by %s at %s\n", cs.Root, cs.Release, cs.ReleaseDigest, cs.OpenedBy, cs.OpenedAt)
	return nil
}
