package board

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// oldMintID is mintID as it was written before it hashed from one buffer: the oracle of
// TestMintID_AsBefore. A minted id names a node in the store and in the log, so the same
// node must get the same id from every build.
func oldMintID(n *node) string {
	content := n.atom.String()
	if n.rec.Kind == contract.NodeRule {
		content = n.rule.String()
	}
	return "n-" + digest(string(n.rec.Kind), string(n.rec.CreatedBy), n.rec.Tier.String(), string(n.rec.CaseID), content).Hex()[:16]
}

func genMintAtom(t *rapid.T, label string) engine.Atom {
	a := engine.Atom{Pred: rapid.StringMatching(`[a-z][a-z0-9_]{0,8}`).Draw(t, label+"-pred"), Neg: rapid.Bool().Draw(t, label+"-neg")}
	for range rapid.IntRange(0, 5).Draw(t, label+"-args") {
		name := rapid.StringMatching(`[a-z]{1,6}`).Draw(t, label+"-name")
		var term engine.Term
		switch rapid.IntRange(0, 3).Draw(t, label+"-term") {
		case 0:
			term = engine.V(rapid.StringMatching(`[A-Z][a-z]{0,4}`).Draw(t, label+"-var"))
		case 1:
			v, err := engine.Int(rapid.Int64Range(-engine.MaxExactInt, engine.MaxExactInt).Draw(t, label+"-i"))
			if err != nil {
				t.Fatal(err)
			}
			term = engine.C(v)
		case 2:
			// Long strings too, so that some contents outgrow the stack buffer.
			term = engine.C(engine.String(rapid.StringN(0, 400, -1).Draw(t, label+"-s")))
		default:
			term = engine.C(engine.Bool(rapid.Bool().Draw(t, label+"-b")))
		}
		a.Args = append(a.Args, engine.Arg{Name: name, Term: term})
	}
	return a
}

// TestMintID_AsBefore checks mintID against the way it minted ids before, on random
// facts, goals and rules by random authors, tiers and Cases.
func TestMintID_AsBefore(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]contract.NodeKind{contract.NodeFact, contract.NodeGoal, contract.NodeRule}).Draw(t, "kind")
		n := &node{rec: contract.Node{
			Kind:      kind,
			CreatedBy: contract.Principal(rapid.StringN(0, 300, -1).Draw(t, "by")),
			Tier:      contract.Tier(rapid.IntRange(0, 8).Draw(t, "tier")),
			CaseID:    contract.CaseID(rapid.StringMatching(`(c-[a-z0-9]{0,12})?`).Draw(t, "case")),
		}}
		if kind == contract.NodeRule {
			r := engine.Rule{Head: genMintAtom(t, "head")}
			for i := range rapid.IntRange(0, 3).Draw(t, "body") {
				r.Body = append(r.Body, engine.Literal{Atom: genMintAtom(t, "body"+strings.Repeat("'", i)), NAF: rapid.Bool().Draw(t, "naf")})
			}
			n.rule = &r
		} else {
			n.atom = genMintAtom(t, "atom")
		}
		b := &Board{}
		if got, want := b.mintID(n), oldMintID(n); got != want {
			t.Fatalf("mintID = %s, want %s", got, want)
		}
	})
}
