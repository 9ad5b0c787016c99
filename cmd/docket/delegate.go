package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// delegateCmd manages the caller's delegates.
type delegateCmd struct {
	Create delegateCreateCmd `cmd:"" help:"Make a delegate: a credential that acts for you in one project, printed once."`
	List   delegateListCmd   `cmd:"" help:"List your delegates, revoked and expired ones included."`
	Revoke delegateRevokeCmd `cmd:"" help:"Revoke one of your delegates; its credential stops at once."`
}

type delegateCreateCmd struct {
	clientFlags
	Life string `required:"" help:"How long it acts for you: 1m to 720h (30 days), e.g. 8h."`
	Name string `help:"Its name, recorded in every event it causes as member:<you>/<name> (default: its id)."`
}

func (c *delegateCreateCmd) Run(ctx context.Context, e *env) error {
	if _, err := contract.ParseDelegateLife(c.Life); err != nil {
		return &usageError{err: err, help: "docket delegate create"}
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var dt contract.DelegateToken
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "delegates"), contract.CreateDelegateRequest{Name: c.Name, Life: c.Life}, &dt); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, dt)
	}
	d := dt.Delegate
	_, err = fmt.Fprintf(e.Stdout, "delegate %s (%s) of project %s acts as %s until %s\ncredential (shown once; give it to your assistant as DOCKET_TOKEN):\n%s\n",
		d.Name, d.ID, d.Project, d.Actor, d.ExpiresAt.Format("2006-01-02 15:04 MST"), dt.Token)
	return err
}

type delegateListCmd struct {
	Output string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
}

func (c *delegateListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Delegate](ctx, cl, "/api/v1/delegates")
	if err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, d := range items {
		state := "live until " + d.ExpiresAt.Format("2006-01-02 15:04 MST")
		if d.RevokedAt != nil {
			state = "revoked"
		}
		rows = append(rows, []string{d.Name, d.ID, string(d.Project), state})
	}
	return writeList(e, []string{"name", "id", "project", "state"}, rows, "no delegates; make one with docket delegate create --life 8h")
}

type delegateRevokeCmd struct {
	Output   string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
	Delegate string `arg:"" help:"The delegate's name or id."`
}

func (c *delegateRevokeCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var d contract.Delegate
	if err := cl.do(ctx, http.MethodDelete, "/api/v1/delegates/"+url.PathEscape(c.Delegate), nil, &d); err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, d)
	}
	_, err = fmt.Fprintf(e.Stdout, "delegate %s revoked\n", d.Name)
	return err
}
