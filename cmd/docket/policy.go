package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/policy"
)

// policyCmd publishes and reads the project's policies: versioned documents
// only a member publishes, each version an event, every decision recording the one in
// force. docs/policies.md describes their fields.
type policyCmd struct {
	Publish policyPublishCmd `cmd:"" help:"Publish a policy file as the next version of its kind."`
	Show    policyShowCmd    `cmd:"" help:"Print a version of a policy kind (default: the one in force)."`
	List    policyListCmd    `cmd:"" help:"List every version of every policy kind."`
	Diff    policyDiffCmd    `cmd:"" help:"Show what changed between two versions of a policy kind."`
}

type policyPublishCmd struct {
	clientFlags
	File string `arg:"" type:"existingfile" help:"The policy document (TOML: one of [delegation_policy], [autonomy_policy], [recovery_policy], [delegate_policy], [hook_policy], [artifact_policy])."`
}

func (c *policyPublishCmd) Run(ctx context.Context, e *env) error {
	text, err := os.ReadFile(c.File)
	if err != nil {
		return err
	}
	if len(text) > policy.MaxText {
		return contract.Errorf(contract.CodePolicyInvalid, "%s: the document is over %d bytes; a policy is a short list of rules", c.File, policy.MaxText)
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var v contract.PolicyVersion
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "policies"), contract.PublishPolicyRequest{File: c.File, Text: string(text)}, &v); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, v)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s policy version %d published (%s)\n", v.Kind, v.Version, v.Digest)
	return err
}

type policyShowCmd struct {
	clientFlags
	Kind    string `arg:"" enum:"delegation,autonomy,recovery,delegate,hook,artifact" help:"delegation, autonomy, recovery, delegate, hook or artifact."`
	Version int64  `name:"at" help:"The version to show (--at N); 0 is the one in force. (--version is docket's own version.)" default:"0"`
}

func (c *policyShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	path := projectPath(c.Project, "policies", c.Kind)
	if c.Version > 0 {
		path += "?version=" + strconv.FormatInt(c.Version, 10)
	}
	var v contract.PolicyVersion
	if err := cl.do(ctx, http.MethodGet, path, nil, &v); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, v)
	}
	if _, err := fmt.Fprintf(e.Stdout, "# %s policy version %d, %s, %s\n", v.Kind, v.Version, policyOrigin(v), v.Digest); err != nil {
		return err
	}
	_, err = fmt.Fprint(e.Stdout, v.Text)
	return err
}

// policyOrigin says who published v: "built in", or the member (by name) and when.
func policyOrigin(v contract.PolicyVersion) string {
	if v.Builtin || v.PublishedAt == nil {
		return "built in"
	}
	by := v.Publisher
	if by == "" {
		by = string(v.PublishedBy)
	}
	return fmt.Sprintf("published by %s at %s from %s", by, v.PublishedAt.Format("2006-01-02T15:04:05Z"), v.File)
}

type policyListCmd struct {
	clientFlags
}

func (c *policyListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.PolicyVersion](ctx, cl, projectPath(c.Project, "policies"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	for _, v := range items {
		if _, err := fmt.Fprintf(e.Stdout, "%s\t%d\t%s\t%s\n", v.Kind, v.Version, v.Digest, policyOrigin(v)); err != nil {
			return err
		}
	}
	return nil
}

type policyDiffCmd struct {
	clientFlags
	Kind string `arg:"" enum:"delegation,autonomy,recovery,delegate,hook,artifact" help:"delegation, autonomy, recovery, delegate, hook or artifact."`
	From int64  `arg:"" help:"The version to compare from (1 is the built-in one)."`
	To   int64  `arg:"" optional:"" help:"The version to compare to; default the one in force."`
}

func (c *policyDiffCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	path := projectPath(c.Project, "policies", c.Kind, "diff") + "?from=" + strconv.FormatInt(c.From, 10)
	if c.To > 0 {
		path += "&to=" + strconv.FormatInt(c.To, 10)
	}
	var d contract.PolicyDiff
	if err := cl.do(ctx, http.MethodGet, path, nil, &d); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, d)
	}
	if _, err := fmt.Fprintf(e.Stdout, "# %s policy, version %d to %d\n", d.Kind, d.From, d.To); err != nil {
		return err
	}
	_, err = fmt.Fprint(e.Stdout, d.Diff)
	return err
}
