package board

import (
	"github.com/docketrun/docket/internal/contract"
)

// QueryMaxMatches is the default and largest number of matches one Query returns (the
// QueryBoard tool's limit). It is larger than the View's node bound because a query is how
// a caller reads past the View.
const QueryMaxMatches = 50

// Query returns the facts pattern matches, at most limit of them, in the
// engine's deterministic order; "?x" arguments are variables. Facts local to an
// exploration Case are included only when caseID is that Case. A limit of 0 or less
// means [QueryMaxMatches].
func (b *Board) Query(pattern contract.Atom, caseID contract.CaseID, limit int) (contract.Bounded[contract.Node], error) {
	p, err := engineAtom(pattern.Predicate, pattern.Args, pattern.Negated, true, &anon{})
	if err != nil {
		return contract.Bounded[contract.Node]{}, err
	}
	if limit <= 0 {
		limit = QueryMaxMatches
	}
	out := contract.Bounded[contract.Node]{Items: []contract.Node{}}
	for e := range b.eng.Match(p) {
		n := b.entryNode(e)
		if n.CaseID != "" && n.CaseID != caseID {
			continue
		}
		if len(out.Items) == limit {
			out.Truncated = true
			break
		}
		out.Items = append(out.Items, n)
	}
	return out, nil
}

// Facts returns every fact the Board holds, base and derived, at most limit of them, in
// the engine's deterministic order. A limit of 0 or less means no limit.
func (b *Board) Facts(limit int) contract.Bounded[contract.Node] {
	out := contract.Bounded[contract.Node]{Items: []contract.Node{}}
	for e := range b.eng.Facts() {
		if limit > 0 && len(out.Items) == limit {
			out.Truncated = true
			break
		}
		out.Items = append(out.Items, b.entryNode(e))
	}
	return out
}
