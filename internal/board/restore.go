package board

import (
	"cmp"
	"slices"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Restore rebuilds a Board from cfg and what the authority persisted: the nodes changes
// returned (facts, rules, goals) and the Case records. Nodes are replayed in Seq order, so
// the rebuilt Board has the same ids, the same derivations and the same View as the one
// that produced them. It refuses derived or capability nodes, which are never persisted,
// and nodes that do not convert.
func Restore(cfg Config, nodes []contract.Node, cases []contract.Case) (*Board, error) {
	b, err := NewConfig(cfg)
	if err != nil {
		return nil, err
	}
	cs := slices.Clone(cases)
	slices.SortFunc(cs, func(x, y contract.Case) int { return cmp.Compare(caseNumber(x.CaseID), caseNumber(y.CaseID)) })
	for i := range cs {
		c := caseCopy(&cs[i])
		b.putCase(&c)
	}
	ns := slices.Clone(nodes)
	slices.SortFunc(ns, func(x, y contract.Node) int { return cmp.Compare(x.Seq, y.Seq) })
	var facts []engine.Fact
	var rules []engine.Rule
	for _, rec := range ns {
		n, err := restoreNode(rec)
		if err != nil {
			return nil, err
		}
		if _, dup := b.nodes[rec.NodeID]; dup {
			return nil, contract.Errorf(contract.CodeNodeConflict, "the persisted node %q appears twice; persist each node once", rec.NodeID)
		}
		switch rec.Kind {
		case contract.NodeFact:
			facts = append(facts, engine.Fact{ID: rec.NodeID, Atom: n.atom, Tier: rec.Tier, Seq: rec.Seq})
		case contract.NodeRule:
			rules = append(rules, *n.rule)
		}
		b.addNode(n)
	}
	if len(rules) > 0 {
		if _, err := b.eng.AddRules(rules...); err != nil {
			return nil, refuse(err, "restore rules")
		}
	}
	if len(facts) > 0 {
		if _, err := b.eng.Assert(facts...); err != nil {
			return nil, refuse(err, "restore facts")
		}
	}
	for _, c := range cs {
		if _, ok := b.nodes[c.Root]; !ok {
			return nil, contract.Errorf(contract.CodeNodeNotFound, "Case %s names the root %s, which is not among the persisted nodes", c.CaseID, c.Root)
		}
	}
	return b, nil
}

// caseNumber orders minted Case ids ("case-12") numerically.
func caseNumber(id contract.CaseID) int {
	n := 0
	for _, c := range string(id) {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
}

func restoreNode(rec contract.Node) (*node, error) {
	n := &node{rec: rec}
	n.rec.Holds = nil
	switch {
	case rec.CreatedBy.Kind() == "" || rec.CreatedBy.Kind() == contract.PrincipalCapability:
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the persisted node %q has creator %q; only agent, tool and member nodes are persisted", rec.NodeID, rec.CreatedBy)
	case !rec.Tier.Valid():
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the persisted node %q has no tier", rec.NodeID)
	}
	var err error
	switch rec.Kind {
	case contract.NodeFact:
		if rec.Atom == nil {
			return nil, contract.Errorf(contract.CodeInvalidArgument, "the persisted fact %q has no atom", rec.NodeID)
		}
		n.atom, err = engineAtom(rec.Atom.Predicate, rec.Atom.Args, rec.Atom.Negated, false, nil)
	case contract.NodeGoal:
		if rec.Atom != nil {
			n.atom, err = engineAtom(rec.Atom.Predicate, rec.Atom.Args, rec.Atom.Negated, true, &anon{})
		}
	case contract.NodeRule:
		if rec.Rule == nil {
			return nil, contract.Errorf(contract.CodeInvalidArgument, "the persisted rule %q has no rule", rec.NodeID)
		}
		r := *rec.Rule
		var agg *contract.Aggregate
		if rec.Aggregate != nil {
			agg = rec.Aggregate
			r.Head.Args = withoutArg(rec.Rule.Head.Args, agg.Into)
		}
		var er engine.Rule
		er, err = engineRule(rec.NodeID, r, agg, rec.Tier)
		n.rule = &er
	default:
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the persisted node %q is %q; only facts, rules and goals are persisted", rec.NodeID, rec.Kind)
	}
	if err != nil {
		return nil, refuse(err, "restore node "+rec.NodeID)
	}
	return n, nil
}

func withoutArg(args contract.Args, name string) contract.Args {
	out := make(contract.Args, len(args))
	for k, v := range args {
		if k != name {
			out[k] = v
		}
	}
	return out
}
