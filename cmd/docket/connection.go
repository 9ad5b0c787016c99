package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// connectionCmd manages Connections, the credentials of workers.
type connectionCmd struct {
	Create connectionCreateCmd `cmd:"" help:"Create a Connection and print its key once."`
	List   connectionListCmd   `cmd:"" help:"List the project's Connections."`
	Revoke connectionRevokeCmd `cmd:"" help:"Revoke a Connection; its key stops working."`
}

type connectionCreateCmd struct {
	clientFlags
	Name string `arg:"" help:"Connection name, unique in the project."`
}

func (c *connectionCreateCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var ck contract.ConnectionKey
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "connections"), contract.CreateConnectionRequest{Name: c.Name}, &ck); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, ck)
	}
	_, err = fmt.Fprintf(e.Stdout, "connection %s (%s) in project %s\nkey (shown once; give it to docket worker as DOCKET_CONNECTION_KEY):\n%s\n",
		ck.Connection.Name, ck.Connection.ID, ck.Connection.Project, ck.Key)
	return err
}

type connectionListCmd struct {
	clientFlags
}

func (c *connectionListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Connection](ctx, cl, projectPath(c.Project, "connections"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, cn := range items {
		state := "live"
		if cn.RevokedAt != nil {
			state = "revoked"
		}
		rows = append(rows, []string{string(cn.ID), cn.Name, state})
	}
	return writeList(e, []string{"id", "name", "state"}, rows,
		"no Connections in project "+c.Project+"; create one for a worker with docket connection create NAME")
}

type connectionRevokeCmd struct {
	clientFlags
	Name string `arg:"" help:"Connection name or id."`
}

func (c *connectionRevokeCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var cn contract.Connection
	if err := cl.do(ctx, http.MethodDelete, projectPath(c.Project, "connections", c.Name), nil, &cn); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, cn)
	}
	_, err = fmt.Fprintf(e.Stdout, "connection %s revoked\n", cn.Name)
	return err
}
