package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// term converts a test shorthand to a Term: engine.Term as is, a string starting with an
// upper-case letter is a variable, "sum(X)" style strings are aggregates, other strings,
// ints, floats and bools are constants.
func term(v any) engine.Term {
	switch x := v.(type) {
	case engine.Term:
		return x
	case engine.Value:
		return engine.C(x)
	case int:
		i, err := engine.Int(int64(x))
		if err != nil {
			panic(err)
		}
		return engine.C(i)
	case float64:
		f, err := engine.Float(x)
		if err != nil {
			panic(err)
		}
		return engine.C(f)
	case bool:
		return engine.C(engine.Bool(x))
	case string:
		for _, fn := range []string{"count", "sum", "min", "max"} {
			if strings.HasPrefix(x, fn+"(") && strings.HasSuffix(x, ")") {
				return engine.Term{Var: x[len(fn)+1 : len(x)-1], Agg: fn}
			}
		}
		if x != "" && x[0] >= 'A' && x[0] <= 'Z' {
			return engine.V(x)
		}
		return engine.C(engine.String(x))
	}
	panic(fmt.Sprintf("term: unsupported %T", v))
}

// at builds an atom: at("p", "a", 1, "b", "X"); a leading "~" on the predicate negates it.
func at(pred string, kv ...any) engine.Atom {
	neg := strings.HasPrefix(pred, "~")
	pred = strings.TrimPrefix(pred, "~")
	var args []engine.Arg
	for i := 0; i < len(kv); i += 2 {
		args = append(args, engine.Arg{Name: kv[i].(string), Term: term(kv[i+1])})
	}
	a, err := engine.NewAtom(pred, neg, args...)
	if err != nil {
		panic(err)
	}
	return a
}

func pos(a engine.Atom) engine.Literal { return engine.Literal{Atom: a} }
func not(a engine.Atom) engine.Literal { return engine.Literal{Atom: a, NAF: true} }

func rule(id string, tier contract.Tier, head engine.Atom, body ...engine.Literal) engine.Rule {
	return engine.Rule{ID: id, Head: head, Body: body, Tier: tier}
}

func fact(id string, tier contract.Tier, a engine.Atom) engine.Fact {
	return engine.Fact{ID: id, Atom: a, Tier: tier}
}

// snapshot renders every fact as "atom tier [base] [derived]", sorted.
func snapshot(e *engine.Engine) []string {
	var out []string
	for en := range e.Facts() {
		s := en.Atom.String() + " " + en.Tier.String()
		if en.Base {
			s += " base"
		}
		if en.Derived {
			s += " derived"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// fullSnapshot is snapshot with the tier of each fact's best derivation.
func fullSnapshot(e *engine.Engine) []string {
	var out []string
	for en := range e.Facts() {
		s := en.Atom.String() + " " + en.Tier.String()
		if en.Base {
			s += " base"
		}
		if en.Derived {
			s += " derived:" + en.DerivedTier.String()
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func mustAssert(t *testing.T, e *engine.Engine, fs ...engine.Fact) engine.Delta {
	t.Helper()
	d, err := e.Assert(fs...)
	if err != nil {
		t.Fatalf("Assert: %v", err)
	}
	return d
}

func mustAddRules(t *testing.T, e *engine.Engine, rs ...engine.Rule) engine.Delta {
	t.Helper()
	d, err := e.AddRules(rs...)
	if err != nil {
		t.Fatalf("AddRules: %v", err)
	}
	return d
}

const (
	verified = contract.TierVerified
	attested = contract.TierAttested
	asserted = contract.TierAsserted
)
