package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// whyCmd prints the derivation tree of a Board node.
type whyCmd struct {
	clientFlags
	Node string `arg:"" help:"Board node id: a fact, a derived fact, a rule or a goal (docket case show lists them)."`
}

func (c *whyCmd) Help() string {
	return `Prints why a node holds: its atom, tier and the rule of its best derivation, then each premise
on its own line below it ("<-"), down to the facts someone asserted (agent:, member:) or a
Tool attested (the Tool, the Action and capability release that return it, and the Sources
bound for that Tool). A premise shown already is marked (see above); "... N more" marks
premises cut by the size or depth bound.

Examples:
  docket case show case-1          lists the acceptance node and the facts, with their ids
  docket why d_4a85cbc46b37d10d0315
  docket why d_4a85cbc46b37d10d0315 -o json`
}

func (c *whyCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	w, err := cl.api.Why(ctx, c.Project, c.Node)
	if err = credential(err); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, w)
	}
	return writeWhy(e.Stdout, w)
}

// writeWhy prints a derivation tree as text, one node a line, each premise indented
// under what it supports.
func writeWhy(out io.Writer, w contract.Why) error {
	var sb strings.Builder
	var walk func(n contract.WhyNode, depth int)
	walk = func(n contract.WhyNode, depth int) {
		indent := strings.Repeat("  ", depth)
		if depth > 0 {
			indent += "<- "
		}
		sb.WriteString(indent + whyLine(n) + "\n")
		for _, p := range n.Premises {
			walk(p, depth+1)
		}
		if n.More > 0 {
			fmt.Fprintf(&sb, "%s  <- ... %d more\n", strings.Repeat("  ", depth), n.More)
		}
	}
	walk(w.Root, 0)
	if w.Omitted > 0 {
		fmt.Fprintf(&sb, "(%d nodes shown, %d premises left out by the bounds; docket why NODE on a cut node shows its own tree)\n", w.Shown, w.Omitted)
	}
	_, err := io.WriteString(out, sb.String())
	return err
}

// whyLine is one node of a tree: what it is, how strong, and where it comes from.
func whyLine(n contract.WhyNode) string {
	parts := []string{string(n.Kind), n.Tier.String()}
	switch {
	case n.Rule != "":
		r := "rule " + n.Rule
		if n.RuleBy != "" {
			r += " of " + string(n.RuleBy)
		}
		parts = append(parts, r)
	case n.Attestation != nil:
		parts = append(parts, attestationText(*n.Attestation))
	case n.CreatedBy != "":
		verb := "asserted by "
		if n.Kind == contract.NodeRule {
			verb = "declared by "
		}
		parts = append(parts, verb+string(n.CreatedBy))
	}
	if n.CaseID != "" {
		parts = append(parts, "local to "+string(n.CaseID))
	}
	line := atomLine(n.Atom, n.NodeID) + " — " + strings.Join(parts, ", ") + " [" + n.NodeID + "]"
	if n.Repeat {
		line += " (see above)"
	}
	return line
}

// attestationText says which Tool attested a fact, through which Action of which release,
// and against which Sources.
func attestationText(a contract.Attestation) string {
	s := "attested by tool " + a.Tool
	if a.Action != "" {
		s += " via " + a.Action
	}
	if a.Release != "" {
		s += " of " + a.Release
	}
	for i, src := range a.Sources {
		sep := ", source "
		if i > 0 {
			sep = " or "
		}
		s += fmt.Sprintf("%s%s (%s, %s) on %s", sep, src.Name, src.Type, src.Digest, src.Connection)
	}
	return s
}

// atomLine prints an atom as predicate{args as JSON}, or the node id when it has none.
func atomLine(a *contract.Atom, id string) string {
	if a == nil {
		return id
	}
	b, err := json.Marshal(a.Args)
	if err != nil {
		return a.Predicate + "{unprintable}"
	}
	return a.Predicate + string(b)
}
