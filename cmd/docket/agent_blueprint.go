package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// agentBlueprintCmd manages the project's blueprints of Agent profiles (docs/agents.md,
// Blueprints).
type agentBlueprintCmd struct {
	Set    agentBlueprintSetCmd    `cmd:"" help:"Set a blueprint: the model, instructions and allow-list the Agents made from it share."`
	Show   agentBlueprintShowCmd   `cmd:"" help:"Show a blueprint."`
	List   agentBlueprintListCmd   `cmd:"" help:"List the project's blueprints."`
	Remove agentBlueprintRemoveCmd `cmd:"" help:"Remove a blueprint; the profiles made from it keep their copy."`
}

type agentBlueprintSetCmd struct {
	clientFlags
	Name string `arg:"" help:"The blueprint's name: lower-case letters, digits, '-', '_' or '.'."`
	modelFlags
	Description string `help:"One line saying what the blueprint's Agents are for."`
}

func (c *agentBlueprintSetCmd) Help() string {
	return `Set replaces the whole blueprint. It is checked when it is set: every Case Type and Action
of its allow-list must be declared by an installed release (or be a locked Tool's direct
Action, or docket.ask, docket.decide, docket.retry), a model at a provider's public
endpoint must be one the price table knows (else give --model-url), and the profile must
be one docket agent profile set would take. A blueprint names no key file and no
enabled switch: each Agent's are given when its profile is made from it.

A profile made from a blueprint is a copy: setting the blueprint again, or removing it,
changes no profile; docket agent profile show says when its blueprint changed since.

Examples:
  docket agent blueprint set researcher --provider openai --model-url http://127.0.0.1:8080/v1 --model qwen2.5 --allow-case-type verified_calculation --allow-action write_output,docket.ask
  docket agent blueprint set reviewer --provider anthropic --model claude-sonnet-4-5 --instructions REVIEW.md --allow-action docket.decide --description 'Decides delegated requests.'
  docket agent profile set calc --blueprint researcher --key-file ~/.docket/agents/calc/model.key`
}

func (c *agentBlueprintSetCmd) Run(ctx context.Context, e *env) error {
	spec, err := c.spec()
	if err != nil {
		return err
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	bp, err := cl.api.SetBlueprint(ctx, c.Project, c.Name, contract.BlueprintSpec{Description: c.Description, Profile: spec})
	if err != nil {
		return err
	}
	return printBlueprint(e, c.clientFlags, bp)
}

type agentBlueprintShowCmd struct {
	clientFlags
	Name string `arg:"" help:"The blueprint."`
}

func (c *agentBlueprintShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	bp, err := cl.api.Blueprint(ctx, c.Project, c.Name)
	if err != nil {
		return err
	}
	return printBlueprint(e, c.clientFlags, bp)
}

type agentBlueprintListCmd struct {
	clientFlags
}

func (c *agentBlueprintListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	bs, err := cl.api.Blueprints(ctx, c.Project)
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, bs)
	}
	rows := make([][]string, 0, len(bs))
	for _, b := range bs {
		rows = append(rows, []string{b.Name, b.Profile.Provider, dash(b.Profile.Model), allowText(b.Profile.Allow), b.Digest.String()})
	}
	return writeList(e, []string{"blueprint", "provider", "model", "allows", "digest"}, rows,
		"no blueprints in project "+c.Project+"; set one with docket agent blueprint set NAME --provider … --allow-action …")
}

type agentBlueprintRemoveCmd struct {
	clientFlags
	Name string `arg:"" help:"The blueprint."`
}

func (c *agentBlueprintRemoveCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	if err := cl.api.RemoveBlueprint(ctx, c.Project, c.Name); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "blueprint %s removed; the profiles made from it keep their copy\n", c.Name)
	return err
}

func printBlueprint(e *env, f clientFlags, b contract.Blueprint) error {
	if f.json() {
		return printJSON(e.Stdout, b)
	}
	p := b.Profile
	lines := [][2]string{
		{"blueprint", b.Name},
		{"description", dash(b.Description)},
		{"provider", p.Provider},
		{"model url", dash(p.ModelURL)},
		{"model", dash(p.Model)},
		{"script", dash(p.Script)},
		{"budgets", budgetText(p)},
		{"instructions", dash(strings.TrimSpace(p.InstructionsFile + " " + p.InstructionsDigest))},
		{"workspace", dash(p.Workspace)},
		{"allows", allowText(p.Allow)},
		{"digest", b.Digest.String()},
		{"set", string(b.SetBy) + " at " + b.SetAt.Format("2006-01-02T15:04:05Z")},
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(e.Stdout, "%-13s %s\n", l[0], l[1]); err != nil {
			return err
		}
	}
	return nil
}

// allowText is an allow-list for people: what it limits, or that it limits nothing.
func allowText(a *contract.AllowList) string {
	if a.Empty() {
		return "anything (no allow-list)"
	}
	var parts []string
	if len(a.CaseTypes) > 0 {
		parts = append(parts, "Case Types "+strings.Join(a.CaseTypes, ", "))
	}
	if len(a.Actions) > 0 {
		parts = append(parts, "Actions "+strings.Join(a.Actions, ", "))
	}
	return strings.Join(parts, "; ")
}
