package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// projectCmd manages projects.
type projectCmd struct {
	Create projectCreateCmd `cmd:"" help:"Create a project with you as its first member."`
	List   projectListCmd   `cmd:"" help:"List your projects."`
}

type projectCreateCmd struct {
	Output string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
	ID     string `arg:"" name:"id" help:"Project id: lower-case letters, digits and '-'."`
	Name   string `help:"Display name (default: the id)."`
}

func (c *projectCreateCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var p contract.Project
	if err := cl.do(ctx, http.MethodPost, "/api/v1/projects", contract.CreateProjectRequest{ID: c.ID, Name: c.Name}, &p); err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, p)
	}
	_, err = fmt.Fprintf(e.Stdout, "project %s created\n", p.ID)
	return err
}

type projectListCmd struct {
	Output string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
}

func (c *projectListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Project](ctx, cl, "/api/v1/projects")
	if err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, p := range items {
		rows = append(rows, []string{string(p.ID), p.Name})
	}
	return writeList(e, []string{"id", "name"}, rows, "no projects you are a member of; create one with docket project create ID")
}
