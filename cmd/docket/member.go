package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// memberCmd manages members.
type memberCmd struct {
	Add memberAddCmd `cmd:"" help:"Add a member to your projects."`
}

type memberAddCmd struct {
	clientFlags
	Name           string `arg:"" help:"Member name."`
	PassphraseFile string `help:"File holding the new member's passphrase (else DOCKET_PASSPHRASE, else a prompt)." type:"path"`
}

func (c *memberAddCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	pass, err := readPassphrase(ctx, e, c.PassphraseFile, "DOCKET_PASSPHRASE", "passphrase for "+c.Name)
	if err != nil {
		return err
	}
	var m contract.Member
	if err := cl.do(ctx, http.MethodPost, "/api/v1/members", contract.CreateMemberRequest{Name: c.Name, Passphrase: pass}, &m); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, m)
	}
	_, err = fmt.Fprintf(e.Stdout, "member %s (%s) added\n", m.Name, m.ID)
	return err
}
