package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// sourceCmd manages the public records of Sources; their secret parts (root path, DSN,
// tokens) stay in the worker's vault.
type sourceCmd struct {
	Bind sourceBindCmd `cmd:"" help:"Bind a Source to a Connection."`
	List sourceListCmd `cmd:"" help:"List the Sources of a Connection."`
}

type sourceBindCmd struct {
	clientFlags
	Connection string   `required:"" help:"Connection name or id."`
	Name       string   `required:"" help:"Source name."`
	Type       string   `required:"" help:"Source type." enum:"file,http,db,mcp"`
	Words      []string `help:"Predicates the Source may attest (comma-separated); none: it attests nothing, and its Tools' results land no fact."`
	Tier       string   `help:"Tier its facts take." default:"attested"`
}

func (c *sourceBindCmd) Run(ctx context.Context, e *env) error {
	tier, err := contract.ParseTier(c.Tier)
	if err != nil {
		return &usageError{err: err}
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var src contract.Source
	in := contract.Source{Name: c.Name, Type: c.Type, Words: c.Words, Tier: tier}
	if err := cl.do(ctx, http.MethodPut, projectPath(c.Project, "connections", c.Connection, "sources", c.Name), in, &src); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, src)
	}
	_, err = fmt.Fprintf(e.Stdout, "source %s (%s, %s: %s) bound to connection %s\ndigest %s\n",
		src.Name, src.Type, src.Tier, strings.Join(src.Words, ", "), src.Connection, src.Digest)
	return err
}

type sourceListCmd struct {
	clientFlags
	Connection string `required:"" help:"Connection name or id."`
}

func (c *sourceListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Source](ctx, cl, projectPath(c.Project, "connections", c.Connection, "sources"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, s := range items {
		rows = append(rows, []string{s.Name, s.Type, s.Tier.String(), strings.Join(s.Words, ",")})
	}
	return writeList(e, []string{"name", "type", "tier", "words"}, rows,
		"no Sources bound to "+c.Connection+"; bind one with docket source bind")
}
