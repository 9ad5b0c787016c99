package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

type casePauseCmd struct {
	clientFlags
	ID     string `arg:"" name:"case" help:"Case id."`
	Reason string `required:"" help:"Why the Case is paused: whoever finds it paused reads this."`
}

func (c *casePauseCmd) Help() string {
	return `Places a member's hold on a running Case. While any hold stands the Case is paused: its
Actions, its Case-local writes and its close are refused case_paused, naming each hold and
who releases it, and the Agents' Views show it blocked. A member's hold is released by any
member (docket case resume); a policy's hold only under its policy. The Case runs again when
no hold is left.

Examples:
  docket case pause case-3 --reason "checking the invoice totals by hand"
  docket case pause case-3 --reason "waiting for the customer" -o json`
}

func (c *casePauseCmd) Run(ctx context.Context, e *env) error {
	return caseHoldAct(ctx, e, c.clientFlags, c.ID, "pause", contract.PauseRequest{Reason: c.Reason})
}

type caseResumeCmd struct {
	clientFlags
	ID   string `arg:"" name:"case" help:"Case id."`
	Hold string `help:"Release only this hold (hold-N); every member's hold when left out."`
}

func (c *caseResumeCmd) Help() string {
	return `Releases a member's hold on a Case: the one --hold names, or every member's hold. A
policy's hold stays until its policy releases it, and the Case stays paused while it does;
the command says which holds are left.

Examples:
  docket case resume case-3
  docket case resume case-3 --hold hold-2`
}

func (c *caseResumeCmd) Run(ctx context.Context, e *env) error {
	return caseHoldAct(ctx, e, c.clientFlags, c.ID, "resume", contract.ResumeRequest{Hold: c.Hold})
}

// caseHoldAct posts a pause or resume of Case id and prints the Case as it stands after.
func caseHoldAct(ctx context.Context, e *env, f clientFlags, id, verb string, body any) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var cs contract.Case
	if err := cl.do(ctx, http.MethodPost, projectPath(f.Project, "cases", id, verb), body, &cs); err != nil {
		return err
	}
	if f.json() {
		return printJSON(e.Stdout, cs)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "case %s %s\n", cs.CaseID, cs.Status)
	writeHolds(&sb, cs)
	_, err = fmt.Fprint(e.Stdout, sb.String())
	return err
}

// writeHolds writes a line for each hold standing on cs.
func writeHolds(sb *strings.Builder, cs contract.Case) {
	for _, h := range cs.Holds {
		owner := "member"
		if h.Owner == contract.HoldPolicy {
			owner = h.Policy + " policy"
		}
		fmt.Fprintf(sb, "hold %s (%s) by %s at %s: %s\n", h.ID, owner, h.By, h.At.Format(time.RFC3339), h.Reason)
	}
}
