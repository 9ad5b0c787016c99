package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// toolCmd manages tool locks: a Tool is usable only while it is locked on its Connection
// at the digest of its definition.
type toolCmd struct {
	Lock toolLockCmd `cmd:"" help:"Lock a Tool on a Connection at a digest."`
	List toolListCmd `cmd:"" help:"List the Tools locked on a Connection."`
}

type toolLockCmd struct {
	clientFlags
	Connection string `required:"" help:"Connection name or id."`
	Tool       string `required:"" help:"Tool id, vendor.name@N."`
	Digest     string `required:"" help:"sha256:<hex> of the Tool's definition, from the worker's manifest."`
}

func (c *toolLockCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var l contract.ToolLock
	if err := cl.do(ctx, http.MethodPut, projectPath(c.Project, "connections", c.Connection, "tools", c.Tool), contract.ToolLock{Tool: c.Tool, Digest: c.Digest}, &l); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, l)
	}
	_, err = fmt.Fprintf(e.Stdout, "tool %s locked on connection %s at %s\n", l.Tool, l.Connection, l.Digest)
	return err
}

type toolListCmd struct {
	clientFlags
	Connection string `required:"" help:"Connection name or id."`
}

func (c *toolListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.ToolLock](ctx, cl, projectPath(c.Project, "connections", c.Connection, "tools"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, l := range items {
		rows = append(rows, []string{l.Tool, l.Digest})
	}
	return writeList(e, []string{"tool", "digest"}, rows,
		"no Tools locked on "+c.Connection+"; lock one with docket tool lock")
}
