package board

import (
	"slices"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Default bounds of [Board.Why].
const (
	DefaultWhyDepth = 12  // levels below the root
	DefaultWhyNodes = 200 // nodes in one tree
)

// WhyLimits bound a derivation tree; zero fields take the defaults.
type WhyLimits struct {
	Depth int // levels below the root that are expanded
	Nodes int // the most nodes the tree shows
}

// Why returns the derivation tree of the node id: for a fact, the rule of its best
// derivation and its premises, level by level, down to what was asserted or attested;
// for a rule or a goal, its own record. The tree is filled breadth first, so the bounds
// cut the deepest premises first; each cut node says how many premises it lost (More),
// and a derived fact reached twice is expanded once and marked Repeat after. A Tool's
// fact names the Tool and the executed Action and release that return its predicate;
// which Sources were bound for that Tool the Board does not know, and the authority adds
// them. Errors: node_not_found.
func (b *Board) Why(id string, lim WhyLimits) (contract.Why, error) {
	if lim.Depth <= 0 {
		lim.Depth = DefaultWhyDepth
	}
	if lim.Nodes <= 0 {
		lim.Nodes = DefaultWhyNodes
	}
	if n, ok := b.nodes[id]; ok && n.rec.Kind != contract.NodeFact {
		root := contract.WhyNode{NodeID: id, Kind: n.rec.Kind, Tier: n.rec.Tier, Atom: n.rec.Atom,
			CaseID: n.rec.CaseID, CreatedBy: n.rec.CreatedBy}
		return contract.Why{Root: root, Shown: 1}, nil
	}
	d, err := b.eng.Explain(id)
	if err != nil {
		return contract.Why{}, contract.Errorf(contract.CodeNodeNotFound,
			"no node has the id %s on this Board; take ids from docket case show or a QueryBoard answer", id)
	}
	type pending struct {
		d     *engine.Derivation
		at    *contract.WhyNode
		depth int
	}
	var w contract.Why
	w.Shown = 1
	expanded := map[string]bool{}
	queue := []pending{{d, &w.Root, 0}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		b.whyNode(p.d, p.at)
		if p.at.Kind != contract.NodeDerived || len(p.d.Premises) == 0 {
			continue
		}
		if expanded[p.d.ID] {
			p.at.Repeat = true
			continue
		}
		expanded[p.d.ID] = true
		k := len(p.d.Premises)
		if p.depth >= lim.Depth {
			k = 0
		}
		k = min(k, lim.Nodes-w.Shown)
		p.at.More = len(p.d.Premises) - k
		w.Omitted += p.at.More
		if k == 0 {
			continue
		}
		p.at.Premises = make([]contract.WhyNode, k)
		w.Shown += k
		for i, pd := range p.d.Premises[:k] {
			queue = append(queue, pending{pd, &p.at.Premises[i], p.depth + 1})
		}
	}
	return w, nil
}

// whyNode fills at with what d and the Board's records say of one node, premises aside.
func (b *Board) whyNode(d *engine.Derivation, at *contract.WhyNode) {
	at.NodeID, at.Tier, at.Atom = d.ID, d.Tier, ptr(wireAtom(d.Atom))
	if d.Rule != "" && !d.Base {
		at.Kind, at.Rule = contract.NodeDerived, d.Rule
		if r, ok := b.nodes[d.Rule]; ok {
			at.RuleBy, at.CaseID = r.rec.CreatedBy, r.rec.CaseID
		}
		return
	}
	at.Kind = contract.NodeDerived
	n, ok := b.nodes[d.ID]
	if !ok {
		return // derived, on a cycle the engine does not explain further
	}
	at.Kind, at.CreatedBy, at.CaseID = n.rec.Kind, n.rec.CreatedBy, n.rec.CaseID
	if n.rec.CreatedBy.Kind() == contract.PrincipalTool {
		at.Attestation = b.attestation(n.rec.CreatedBy.ID(), d.Atom.Pred)
	}
}

// attestation names the Tool that wrote a fact of pred and the first executed Action (in
// declaration order) running that Tool whose returns or effects make pred.
func (b *Board) attestation(tool, pred string) *contract.Attestation {
	at := &contract.Attestation{Tool: tool}
	for _, name := range b.actionSeq {
		a := b.actions[name]
		if a.Execution == nil || a.Execution.Tool != tool {
			continue
		}
		makes := slices.ContainsFunc(a.Execution.Returns, func(r Return) bool { return r.Predicate == pred }) ||
			slices.ContainsFunc(a.Effects, func(e Effect) bool { return !e.Consume && e.Atom.Pred == pred })
		if makes {
			at.Action, at.Release = name, b.actionRel[name]
			break
		}
	}
	return at
}

// maxCaseFacts bounds the facts [Board.Evidence] lists for a Case not yet certified.
const maxCaseFacts = 200

// Evidence is what a Case rests on: the acceptance node that certifies its root now (nil
// when nothing does) with its derivation tree, and the base facts of that tree.
type Evidence struct {
	Acceptance *contract.Node
	Why        *contract.Why
	Facts      []contract.WhyNode
}

// Evidence returns what Case id rests on. A Case not certified lists instead the base
// facts whose arguments carry its business key, at most maxCaseFacts of them, so a person
// sees what is there so far. Errors: case_not_found.
func (b *Board) Evidence(id contract.CaseID, lim WhyLimits) (Evidence, error) {
	c, ok := b.cases[id]
	if !ok {
		return Evidence{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; list them with docket case list", id)
	}
	ev := Evidence{Facts: []contract.WhyNode{}}
	if acc, err := b.Certify(id); err == nil {
		w, err := b.Why(acc.NodeID, lim)
		if err != nil {
			return Evidence{}, err
		}
		ev.Acceptance, ev.Why = &acc, &w
		seen := map[string]bool{}
		var leaves func(n contract.WhyNode)
		leaves = func(n contract.WhyNode) {
			if n.Kind == contract.NodeFact && !seen[n.NodeID] {
				seen[n.NodeID] = true
				ev.Facts = append(ev.Facts, n)
			}
			for _, p := range n.Premises {
				leaves(p)
			}
		}
		leaves(w.Root)
		return ev, nil
	}
	for _, nid := range b.recent {
		n, ok := b.nodes[nid]
		if !ok || n.rec.NodeID != nid || n.rec.Kind != contract.NodeFact || n.rec.Atom == nil || !carriesKey(*n.rec.Atom, c.BusinessKey) {
			continue
		}
		if len(ev.Facts) == maxCaseFacts {
			break
		}
		w, err := b.Why(nid, WhyLimits{Nodes: 1})
		if err != nil {
			return Evidence{}, err
		}
		ev.Facts = append(ev.Facts, w.Root)
	}
	return ev, nil
}

// carriesKey reports whether a has every argument of key with its value.
func carriesKey(a contract.Atom, key contract.Args) bool {
	for k, v := range key {
		if got, ok := a.Args[k]; !ok || got != v {
			return false
		}
	}
	return len(key) > 0
}
