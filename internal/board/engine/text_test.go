package engine_test

import (
	"math"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/docketrun/docket/internal/board/engine"
)

// oldValueString, oldTermString and oldAtomString are the String forms as they were
// written before AppendTo: the oracle AppendTo and the String built on it must match,
// since the Board mints a fact's id from an atom's text and a changed text changes ids.
func oldValueString(v engine.Value) string {
	switch v.Kind() {
	case engine.KindString:
		return strconv.Quote(v.Str())
	case engine.KindInt:
		return strconv.FormatInt(v.IntVal(), 10)
	case engine.KindFloat:
		s := strconv.FormatFloat(v.FloatVal(), 'g', -1, 64)
		if !oldContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case engine.KindBool:
		return strconv.FormatBool(v.BoolVal())
	}
	return "<invalid>"
}

func oldContainsAny(s, chars string) bool {
	for _, c := range s {
		for _, d := range chars {
			if c == d {
				return true
			}
		}
	}
	return false
}

func oldTermString(t engine.Term) string {
	if t.IsVar() {
		if t.Agg != "" {
			return t.Agg + "(" + t.Var + ")"
		}
		return t.Var
	}
	return oldValueString(t.Val)
}

func oldAtomString(a engine.Atom) string {
	b := make([]byte, 0, 32)
	if a.Neg {
		b = append(b, '~')
	}
	b = append(b, a.Pred...)
	b = append(b, '(')
	for i, arg := range a.Args {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, arg.Name...)
		b = append(b, ": "...)
		b = append(b, oldTermString(arg.Term)...)
	}
	return string(append(b, ')'))
}

func genTextValue(t *rapid.T, label string) engine.Value {
	switch rapid.IntRange(0, 4).Draw(t, label+"-kind") {
	case 0:
		return engine.String(rapid.String().Draw(t, label+"-s"))
	case 1:
		v, err := engine.Int(rapid.Int64Range(-engine.MaxExactInt, engine.MaxExactInt).Draw(t, label+"-i"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	case 2:
		f := rapid.OneOf(rapid.Float64(), rapid.SampledFrom([]float64{0, 1, -1, 1e21, 1e-7, 0.5, 123456789, math.MaxFloat64, math.SmallestNonzeroFloat64})).Draw(t, label+"-f")
		v, err := engine.Float(f)
		if err != nil {
			t.Fatal(err)
		}
		return v
	case 3:
		return engine.Bool(rapid.Bool().Draw(t, label+"-b"))
	}
	return engine.Value{}
}

func genTextTerm(t *rapid.T, label string) engine.Term {
	switch rapid.IntRange(0, 2).Draw(t, label+"-term") {
	case 0:
		return engine.V(rapid.StringMatching(`[A-Z_][a-z0-9_]{0,5}`).Draw(t, label+"-var"))
	case 1:
		return engine.Term{Var: rapid.StringMatching(`[A-Z][a-z]{0,3}`).Draw(t, label+"-aggvar"),
			Agg: rapid.SampledFrom([]string{"count", "sum", "min", "max"}).Draw(t, label+"-agg")}
	}
	return engine.C(genTextValue(t, label))
}

// TestAppendTo_AsString checks each AppendTo against the String form it replaced, on
// random values, terms and atoms, appended after a random prefix.
func TestAppendTo_AsString(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := []byte(rapid.String().Draw(t, "prefix"))
		v := genTextValue(t, "v")
		if got, want := v.String(), oldValueString(v); got != want {
			t.Fatalf("Value.String = %q, want %q", got, want)
		}
		if got, want := string(v.AppendTo(prefix[:len(prefix):len(prefix)])), string(prefix)+oldValueString(v); got != want {
			t.Fatalf("Value.AppendTo = %q, want %q", got, want)
		}
		term := genTextTerm(t, "term")
		if got, want := term.String(), oldTermString(term); got != want {
			t.Fatalf("Term.String = %q, want %q", got, want)
		}
		a := engine.Atom{Pred: rapid.StringMatching(`[a-z][a-z0-9_]{0,6}`).Draw(t, "pred"), Neg: rapid.Bool().Draw(t, "neg")}
		for i := range rapid.IntRange(0, 4).Draw(t, "args") {
			a.Args = append(a.Args, engine.Arg{Name: rapid.StringMatching(`[a-z]{1,4}`).Draw(t, "name"), Term: genTextTerm(t, "arg"+strconv.Itoa(i))})
		}
		if got, want := a.String(), oldAtomString(a); got != want {
			t.Fatalf("Atom.String = %q, want %q", got, want)
		}
		if got, want := string(a.AppendTo(prefix)), string(prefix)+oldAtomString(a); got != want {
			t.Fatalf("Atom.AppendTo = %q, want %q", got, want)
		}
	})
}
