package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// toolCmd manages tool locks: a Tool is usable only while it is locked on its Connection
// at the digest of its definition; a locked Tool that states its params is also a direct
// Action (docs/workers.md, "Direct Actions").
type toolCmd struct {
	Lock     toolLockCmd     `cmd:"" help:"Lock a Tool on a Connection: the digest its worker advertises now, or one pinned with --digest."`
	Unlock   toolUnlockCmd   `cmd:"" help:"Take a Tool's lock off a Connection; pending requests naming it become void."`
	Approval toolApprovalCmd `cmd:"" help:"Set what a locked Tool's direct Action needs: none, person or a delegation class."`
	List     toolListCmd     `cmd:"" help:"List the Tools locked on a Connection."`
	Show     toolShowCmd     `cmd:"" help:"Show every Tool a Connection's worker advertises or that is locked on it, and its Sources."`
}

type toolLockCmd struct {
	clientFlags
	Connection string `required:"" help:"Connection name or id."`
	Tool       string `required:"" help:"Tool id, vendor.name@N."`
	Digest     string `help:"sha256:<hex> to pin; refused when the live worker advertises another. Default: the digest the worker advertises now."`
	Approval   string `help:"What its direct Action needs: none, person or a delegation class. Default: none for a read, person for a write or run."`
}

func (c *toolLockCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	l, err := cl.api.LockTool(ctx, c.Project, c.Connection, c.Tool, c.Digest, c.Approval)
	if err != nil {
		return credential(err)
	}
	if c.json() {
		return printJSON(e.Stdout, l)
	}
	_, err = fmt.Fprintf(e.Stdout, "tool %s locked on connection %s at %s (approval %s%s)\n", l.Tool, l.Connection, l.Digest, l.Approval, directNote(l))
	return err
}

// directNote says whether a lock offers its Tool as a direct Action.
func directNote(l contract.ToolLock) string {
	if l.Descriptor != nil && l.Descriptor.Direct {
		return "; offered as the direct Action " + l.Tool
	}
	return "; no direct Action: the worker did not advertise its params at this digest"
}

type toolUnlockCmd struct {
	clientFlags
	Connection string `required:"" help:"Connection name or id."`
	Tool       string `required:"" help:"Tool id, vendor.name@N."`
}

func (c *toolUnlockCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	l, err := cl.api.UnlockTool(ctx, c.Project, c.Connection, c.Tool)
	if err != nil {
		return credential(err)
	}
	if c.json() {
		return printJSON(e.Stdout, l)
	}
	_, err = fmt.Fprintf(e.Stdout, "tool %s unlocked on connection %s (it was locked at %s)\n", l.Tool, l.Connection, l.Digest)
	return err
}

type toolApprovalCmd struct {
	clientFlags
	Connection string `required:"" help:"Connection name or id."`
	Tool       string `required:"" help:"Tool id, vendor.name@N."`
	Approval   string `arg:"" help:"none, person or a delegation class name."`
}

func (c *toolApprovalCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	l, err := cl.api.SetToolApproval(ctx, c.Project, c.Connection, c.Tool, c.Approval)
	if err != nil {
		return credential(err)
	}
	if c.json() {
		return printJSON(e.Stdout, l)
	}
	_, err = fmt.Fprintf(e.Stdout, "tool %s on connection %s now needs approval %s\n", l.Tool, l.Connection, l.Approval)
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
		rows = append(rows, []string{l.Tool, l.Digest, l.Approval})
	}
	return writeList(e, []string{"tool", "digest", "approval"}, rows,
		"no Tools locked on "+c.Connection+"; lock one with docket tool lock")
}

type toolShowCmd struct {
	clientFlags
	Connection string `required:"" help:"Connection name or id."`
}

func (c *toolShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	inv, err := cl.api.ToolInventory(ctx, c.Project, c.Connection)
	if err != nil {
		return credential(err)
	}
	if c.json() {
		return printJSON(e.Stdout, inv)
	}
	rows := make([][]string, 0, len(inv.Tools))
	for _, t := range inv.Tools {
		kind, locked, approval := "-", "no", "-"
		if t.Advertised != nil {
			kind = t.Advertised.Kind
		}
		if t.Lock != nil {
			locked, approval = t.Lock.Digest, t.Lock.Approval
		}
		if t.Stale {
			locked += " (stale)"
		}
		rows = append(rows, []string{t.Tool, kind, locked, approval, strings.TrimSpace(t.Action)})
	}
	return writeList(e, []string{"tool", "kind", "locked", "approval", "action"}, rows,
		"connection "+c.Connection+" has no Tool locked and no worker advertised one to this serve; start its worker (docket worker)")
}
