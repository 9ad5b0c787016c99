package engine

import (
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// program is a compiled rule set with its strata. It is replaced, never changed, by
// AddRules and RemoveRules, so that a failed mutation restores it by pointer.
type program struct {
	rules  []*crule // in the order they were added
	byID   map[string]*crule
	strata []*stratum // dependencies first
	headOf map[*relation]*stratum
	// readBelow holds the relations a stratum reads that it does not derive: only their
	// net changes need settling for later strata.
	readBelow map[*relation]bool
	// read holds every relation a rule body reads (positive, NAF, aggregated): a fact of
	// any other relation derives nothing (see [Engine.Reads]).
	read map[*relation]bool
}

// stratum is one strongly connected component of the predicate dependency graph: the rules
// whose heads depend on each other. It is evaluated after every stratum it reads from.
type stratum struct {
	rules []*crule
	heads []*relation
	// reads lists the relations its rule bodies read (positive, NAF, aggregated), in rule
	// order, so that evaluation visits them deterministically and ties between equally
	// strong derivations always go the same way.
	reads []*relation
}

// depEdge is "head depends on body"; strict when through NAF or an aggregate.
type depEdge struct {
	to     *relation
	strict bool
	rule   *crule
}

// newProgram stratifies rules, refusing negation or aggregation through recursion with a
// teaching sentence that names the cycle.
func newProgram(rules []*crule) (*program, error) {
	p := &program{rules: rules, byID: make(map[string]*crule, len(rules)), headOf: make(map[*relation]*stratum), readBelow: make(map[*relation]bool), read: make(map[*relation]bool)}
	edges := make(map[*relation][]depEdge)
	var heads []*relation
	seen := make(map[*relation]bool)
	for _, r := range rules {
		p.byID[r.src.ID] = r
		h := r.headTab.rel
		if !seen[h] {
			seen[h] = true
			heads = append(heads, h)
		}
		for _, l := range r.body {
			if l.kind != litBuiltin {
				edges[h] = append(edges[h], depEdge{to: l.rel, strict: l.kind == litNAF || r.isAgg, rule: r})
			}
		}
	}
	// Tarjan's algorithm; it emits a component after every component it reaches, so
	// dependencies come first.
	index := make(map[*relation]int)
	low := make(map[*relation]int)
	onStack := make(map[*relation]bool)
	var stack []*relation
	var comps [][]*relation
	var visit func(v *relation)
	visit = func(v *relation) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		onStack[v] = true
		for _, ed := range edges[v] {
			w := ed.to
			if !seen[w] {
				continue // a relation no rule derives is base only
			}
			if _, ok := index[w]; !ok {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []*relation
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			comps = append(comps, comp)
		}
	}
	for _, h := range heads {
		if _, ok := index[h]; !ok {
			visit(h)
		}
	}
	for _, comp := range comps {
		s := &stratum{heads: comp}
		in := make(map[*relation]bool, len(comp))
		for _, h := range comp {
			in[h] = true
			p.headOf[h] = s
		}
		for _, h := range comp {
			for _, ed := range edges[h] {
				if ed.strict && in[ed.to] {
					return nil, errorf(contract.CodeStratification,
						"rule %s makes a cycle through negation or aggregation: %s; a predicate cannot depend on its own absence or on an aggregate of itself: remove the not or the aggregate from the cycle, or derive the negated predicate from facts outside it",
						ed.rule.src.ID, cycleText(h, ed, edges, in))
				}
			}
		}
		p.strata = append(p.strata, s)
	}
	for _, r := range rules {
		s := p.headOf[r.headTab.rel]
		s.rules = append(s.rules, r)
		for _, l := range r.body {
			if l.rel != nil && !slices.Contains(s.reads, l.rel) {
				s.reads = append(s.reads, l.rel)
			}
			if l.rel != nil {
				p.read[l.rel] = true
			}
			if l.rel != nil && p.headOf[l.rel] != s {
				p.readBelow[l.rel] = true
			}
		}
	}
	return p, nil
}

// cycleText describes the cycle that starts with the strict edge from h, e.g.
// "p depends on not q, and q depends on p".
func cycleText(h *relation, first depEdge, edges map[*relation][]depEdge, in map[*relation]bool) string {
	// breadth-first search from first.to back to h inside the component
	prev := map[*relation]depEdge{}
	from := map[*relation]*relation{}
	queue := []*relation{first.to}
	visited := map[*relation]bool{first.to: true}
	for len(queue) > 0 && !visited[h] {
		v := queue[0]
		queue = queue[1:]
		for _, ed := range edges[v] {
			if in[ed.to] && !visited[ed.to] {
				visited[ed.to] = true
				prev[ed.to] = ed
				from[ed.to] = v
				queue = append(queue, ed.to)
			}
		}
	}
	parts := []string{depText(h, first)}
	var path []string
	for v := h; v != first.to; v = from[v] {
		if _, ok := from[v]; !ok {
			break
		}
		path = append(path, depText(from[v], prev[v]))
	}
	for i := len(path) - 1; i >= 0; i-- {
		parts = append(parts, path[i])
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + ", and " + parts[len(parts)-1]
}

func depText(from *relation, ed depEdge) string {
	switch {
	case ed.strict && ed.rule.isAgg:
		return from.key.String() + " aggregates " + ed.to.key.String()
	case ed.strict:
		return from.key.String() + " depends on not " + ed.to.key.String()
	}
	return from.key.String() + " depends on " + ed.to.key.String()
}
