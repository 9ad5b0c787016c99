package engine

import (
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestCheckFactAtom_AsCheckAtom checks checkFactAtom, which returns an atom already in
// NewAtom's form as it is, against checkAtom, which copies every atom: on random atoms,
// valid and not (bad names, unsorted or repeated arguments, zero constants, too many
// arguments), both return the same atom or the same refusal.
func TestCheckFactAtom_AsCheckAtom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.OneOf(rapid.StringMatching(`[a-d]`), rapid.StringMatching(`[a-z][a-z0-9_]{0,3}`), rapid.SampledFrom([]string{"", "A", "1x", "x-y"}))
		a := Atom{Pred: name.Draw(t, "pred"), Neg: rapid.Bool().Draw(t, "neg")}
		n := rapid.IntRange(0, 4).Draw(t, "args")
		if rapid.IntRange(0, 5).Draw(t, "many") == 0 {
			n = rapid.IntRange(maxArgs-1, maxArgs+2).Draw(t, "n")
		}
		for i := range n {
			var term Term
			switch rapid.IntRange(0, 3).Draw(t, "term") {
			case 0:
				term = V("X")
			case 1:
				term = Term{} // a zero constant
			default:
				term = C(String(rapid.StringN(0, 3, -1).Draw(t, "s")))
			}
			arg := Arg{Name: name.Draw(t, "name"), Term: term}
			if n > 4 { // valid but for their number, so that only the bound refuses
				arg = Arg{Name: fmt.Sprintf("a%03d", i), Term: C(String("v"))}
			}
			a.Args = append(a.Args, arg)
		}
		if rapid.Bool().Draw(t, "sort") {
			if s, err := NewAtom(a.Pred, a.Neg, a.Args...); err == nil {
				a = s
			}
		}
		got, gotErr := checkFactAtom(a)
		want, wantErr := checkAtom(a)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("checkFactAtom(%v) refused with %v, checkAtom with %v", a, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("checkFactAtom(%v) = %v, checkAtom = %v", a, got, want)
		}
	})
}
