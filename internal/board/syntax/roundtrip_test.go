package syntax_test

import (
	"strconv"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

// genName draws a predicate or argument name; "not", "true" and the aggregate names are
// included on purpose, since they are also keywords.
var genName = rapid.OneOf(
	rapid.SampledFrom([]string{"not", "true", "false", "sum", "count", "p", "edge"}),
	rapid.StringMatching(`[a-z][a-z0-9_]{0,8}`),
)

// genVar draws a variable name: capitalised, underscored, lower case (printed ?name), or
// "_" for an anonymous variable that [canonicalAnonymous] numbers.
var genVar = rapid.OneOf(
	rapid.StringMatching(`[A-Z][A-Za-z0-9_]{0,5}`),
	rapid.StringMatching(`_[a-zA-Z][a-z0-9]{0,4}`),
	rapid.StringMatching(`[a-z][a-z0-9_]{0,5}`),
	rapid.Just("_"),
)

var genValue = rapid.Custom(func(t *rapid.T) engine.Value {
	switch rapid.IntRange(0, 3).Draw(t, "kind") {
	case 0:
		return engine.String(rapid.String().Draw(t, "s"))
	case 1:
		v, err := engine.Int(rapid.Int64Range(-engine.MaxExactInt, engine.MaxExactInt).Draw(t, "i"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	case 2:
		v, err := engine.Float(rapid.Float64().Draw(t, "f"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return engine.Bool(rapid.Bool().Draw(t, "b"))
})

// genAtom draws an atom; ground atoms have only constants, and head atoms may aggregate.
func genAtom(ground, head bool) *rapid.Generator[engine.Atom] {
	return rapid.Custom(func(t *rapid.T) engine.Atom {
		names := rapid.SliceOfDistinct(genName, rapid.ID[string]).Draw(t, "args")
		var args []engine.Arg
		for _, n := range names {
			var term engine.Term
			if ground || rapid.Bool().Draw(t, "const") {
				term = engine.C(genValue.Draw(t, "value"))
			} else {
				term = engine.V(genVar.Draw(t, "var"))
				if head && term.Var != "_" && rapid.IntRange(0, 4).Draw(t, "agg") == 0 {
					term.Agg = rapid.SampledFrom([]string{"count", "sum", "min", "max"}).Draw(t, "fn")
				}
			}
			args = append(args, engine.Arg{Name: n, Term: term})
		}
		a, err := engine.NewAtom(genName.Draw(t, "pred"), rapid.Bool().Draw(t, "neg"), args...)
		if err != nil {
			t.Fatal(err)
		}
		return a
	})
}

// canonicalAnonymous numbers "_" variables as Parse does: head arguments, then body
// literals, in argument order.
func canonicalAnonymous(atoms ...*engine.Atom) {
	n := 0
	for _, a := range atoms {
		for i := range a.Args {
			if a.Args[i].Term.Var == "_" {
				n++
				a.Args[i].Term.Var = "_" + strconv.Itoa(n)
			}
		}
	}
}

var genStatement = rapid.Custom(func(t *rapid.T) syntax.Statement {
	if rapid.Bool().Draw(t, "fact") {
		a := genAtom(true, false).Draw(t, "fact")
		return syntax.Statement{Fact: &a}
	}
	r := engine.Rule{Head: genAtom(false, true).Draw(t, "head")}
	atoms := []*engine.Atom{&r.Head}
	for range rapid.IntRange(1, 4).Draw(t, "body") {
		r.Body = append(r.Body, engine.Literal{Atom: genAtom(false, false).Draw(t, "lit"), NAF: rapid.Bool().Draw(t, "naf")})
	}
	for i := range r.Body {
		atoms = append(atoms, &r.Body[i].Atom)
	}
	canonicalAnonymous(atoms...)
	if rapid.Bool().Draw(t, "named") {
		r.ID = rapid.StringMatching(`[a-z][a-z0-9_.:/#-]{0,10}`).Draw(t, "id")
	} else {
		r.ID = syntax.DefaultRuleID(r)
	}
	return syntax.Statement{Rule: &r}
})

func TestPrint_RoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		stmts := rapid.SliceOf(genStatement).Draw(t, "stmts")
		ids := map[string]bool{}
		for _, s := range stmts {
			if s.Rule != nil {
				if ids[s.Rule.ID] {
					t.Skip("two rules with one id are refused by design")
				}
				ids[s.Rule.ID] = true
			}
		}
		text := syntax.Print(stmts)
		got, err := syntax.Parse("printed.dl", text)
		if err != nil {
			t.Fatalf("Parse(Print(x)) error: %v\nprinted:\n%s", err, text)
		}
		ignorePos := cmp.FilterPath(func(p cmp.Path) bool { s := p.Last().String(); return s == ".Pos" || s == ".BodyPos" }, cmp.Ignore())
		if diff := cmp.Diff(stmts, got, valueCmp, ignorePos, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Parse(Print(x)) != x (-x +got):\n%s\nprinted:\n%s", diff, text)
		}
	})
}

func TestMarshalJSONPattern_RoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		a := genAtom(false, false).Draw(t, "atom")
		canonicalAnonymous(&a)
		b, err := syntax.MarshalJSONPattern(a)
		if err != nil {
			t.Skip("a string that spells a variable cannot travel in a pattern")
		}
		got, err := syntax.ParseJSONPattern("pattern", b)
		if err != nil {
			t.Fatalf("ParseJSONPattern(%s) error: %v", b, err)
		}
		if diff := cmp.Diff(a, got, valueCmp, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("ParseJSONPattern(MarshalJSONPattern(a)) != a (-a +got):\n%s\njson: %s", diff, b)
		}
	})
}
