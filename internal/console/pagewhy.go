package console

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// whyTree is a derivation tree as the Case and fact pages show it, once as nested
// <details> and once as an SVG graph laid out by depth (web/partials/why.html).
type whyTree struct {
	Root    whyView
	Shown   int
	Omitted int
	Graph   whyGraph
}

// whyView is one node of a derivation tree with what a person reads of it: the atom,
// its tier, the rule that derived it, and who asserted it or what attested it.
type whyView struct {
	ID, Kind, Tier, Atom, Href string
	Rule, RuleBy               string
	By                         who    // who asserted a base node, by name
	Tool, Action, Release      string // what attested a Tool's fact
	Sources                    []string
	More                       int
	Repeat                     bool
	Premises                   []whyView
}

// whyGraph is the SVG drawing of a derivation tree: one box per node, its depth giving
// its row, premises below the node they support.
type whyGraph struct {
	Width, Height int
	BoxW, BoxH    int // every node's box
	Nodes         []graphNode
	Edges         []graphEdge
}

type graphNode struct {
	X, Y, TX, TY int
	Label, Sub   string // the atom, cut to fit; its tier and rule or Tool
	Title, Class string
	Href         string
}

type graphEdge struct{ X1, Y1, X2, Y2 int }

// The graph's geometry, in SVG user units.
const (
	graphBoxW  = 240
	graphBoxH  = 40
	graphGapX  = 16
	graphGapY  = 44
	graphPad   = 8
	graphLabel = 28 // characters of an atom a box shows; its title has all of it
	graphSub   = 38 // characters of the tier and provenance line
)

// newWhyTree prepares w for a page, with who asserted each node by name.
func newWhyTree(book nameBook, w contract.Why) whyTree {
	t := whyTree{Root: newWhyView(book, w.Root), Shown: w.Shown, Omitted: w.Omitted}
	t.Graph = layout(&t.Root)
	return t
}

func newWhyView(book nameBook, n contract.WhyNode) whyView {
	v := whyView{ID: n.NodeID, Kind: string(n.Kind), Tier: n.Tier.String(), Atom: atomText(n.Atom),
		Href: factHref(book.project, n.NodeID), Rule: n.Rule, RuleBy: string(n.RuleBy),
		More: n.More, Repeat: n.Repeat}
	if n.CreatedBy != "" {
		v.By = book.who(n.CreatedBy)
	}
	if at := n.Attestation; at != nil {
		v.Tool, v.Action, v.Release = at.Tool, at.Action, at.Release
		for _, s := range at.Sources {
			v.Sources = append(v.Sources, s.Name+" ("+s.Type+")")
		}
	}
	for _, p := range n.Premises {
		v.Premises = append(v.Premises, newWhyView(book, p))
	}
	return v
}

// whoAsserted appends to ps who asserted n and each of its premises, for [Server.names].
func whoAsserted(ps []contract.Principal, n contract.WhyNode) []contract.Principal {
	if n.CreatedBy != "" {
		ps = append(ps, n.CreatedBy)
	}
	for _, p := range n.Premises {
		ps = whoAsserted(ps, p)
	}
	return ps
}

// factHref is the page of one Board node.
func factHref(project contract.ProjectID, node string) string {
	return "/projects/" + url.PathEscape(string(project)) + "/board/" + url.PathEscape(node)
}

// atomText writes a as in the rule text syntax: predicate(name: value, …), names sorted.
func atomText(a *contract.Atom) string {
	if a == nil {
		return ""
	}
	var b strings.Builder
	if a.Negated {
		b.WriteString("~")
	}
	b.WriteString(a.Predicate)
	b.WriteString("(")
	for i, k := range slices.Sorted(maps.Keys(a.Args)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": " + a.Args[k].String())
	}
	b.WriteString(")")
	return b.String()
}

// layout places the nodes of the tree under root row by row, breadth first, each row
// centred under the widest, and draws an edge from each node to each of its premises.
func layout(root *whyView) whyGraph {
	type placed struct {
		v           *whyView
		parent, row int // parent is an index into nodes, -1 for the root
	}
	var rows [][]int // node indexes by depth
	var nodes []placed
	queue := []placed{{root, -1, 0}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		i := len(nodes)
		nodes = append(nodes, p)
		if p.row == len(rows) {
			rows = append(rows, nil)
		}
		rows[p.row] = append(rows[p.row], i)
		for k := range p.v.Premises {
			queue = append(queue, placed{&p.v.Premises[k], i, p.row + 1})
		}
	}
	widest := 0
	for _, r := range rows {
		widest = max(widest, len(r))
	}
	g := whyGraph{BoxW: graphBoxW, BoxH: graphBoxH, Width: 2*graphPad + widest*graphBoxW + max(widest-1, 0)*graphGapX,
		Height: 2*graphPad + len(rows)*graphBoxH + max(len(rows)-1, 0)*graphGapY}
	g.Nodes = make([]graphNode, len(nodes))
	for depth, r := range rows {
		offset := (widest - len(r)) * (graphBoxW + graphGapX) / 2
		for col, i := range r {
			v := nodes[i].v
			x := graphPad + offset + col*(graphBoxW+graphGapX)
			y := graphPad + depth*(graphBoxH+graphGapY)
			label := v.Atom
			if label == "" {
				label = v.ID
			}
			sub := v.Tier
			switch {
			case v.Tool != "":
				sub += " · " + v.Tool
			case v.Rule != "":
				sub += " · rule " + v.Rule[strings.LastIndex(v.Rule, "/")+1:]
			case v.By.Name != "":
				sub += " · " + v.By.Name
			}
			g.Nodes[i] = graphNode{X: x, Y: y, TX: x + 8, TY: y + 17, Label: cut(label, graphLabel), Sub: cut(sub, graphSub),
				Title: v.Atom + " · " + v.Tier + provenance(v), Class: "node-" + v.Kind, Href: v.Href}
		}
	}
	for i, p := range nodes {
		if p.parent < 0 {
			continue
		}
		from, to := g.Nodes[p.parent], g.Nodes[i]
		g.Edges = append(g.Edges, graphEdge{X1: from.X + graphBoxW/2, Y1: from.Y + graphBoxH, X2: to.X + graphBoxW/2, Y2: to.Y})
	}
	return g
}

// provenance says in a few words where a node comes from, for the graph's titles.
func provenance(v *whyView) string {
	switch {
	case v.Tool != "":
		return " · attested by " + v.Tool
	case v.Rule != "":
		return " · rule " + v.Rule
	case v.By.Name != "":
		return " · asserted by " + v.By.Name
	}
	return ""
}

// cut shortens s to n characters, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
