package engine_test

import (
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
)

// TestEngine_Reads: a relation is read when a rule's body names it, positively, under
// not or aggregated, and only while that rule is on the program; a relation a rule only
// derives, a strongly negated relation of a read one and one no rule names are not.
func TestEngine_Reads(t *testing.T) {
	e := engine.New(engine.Limits{})
	mustAssert(t, e, fact("f1", verified, at("order", "id", "o1")), fact("f2", verified, at("lone", "id", "o1")))
	mustAddRules(t, e,
		rule("r1", verified, at("known", "id", "I"), pos(at("order", "id", "I")), not(at("paid", "id", "I"))),
		rule("r2", verified, at("total", "n", "count(I)"), pos(at("line", "id", "I"))),
	)
	tests := []struct {
		pred string
		neg  bool
		want bool
	}{
		{"order", false, true},
		{"paid", false, true},
		{"line", false, true},
		{"known", false, false},
		{"total", false, false},
		{"order", true, false},
		{"lone", false, false},
		{"never", false, false},
	}
	check := func(when string, removed string) {
		t.Helper()
		for _, tt := range tests {
			want := tt.want && !(removed == "r1" && (tt.pred == "order" || tt.pred == "paid"))
			if got := e.Reads(tt.pred, tt.neg); got != want {
				t.Errorf("%s: Reads(%s, neg %v) = %v, want %v", when, tt.pred, tt.neg, got, want)
			}
		}
	}
	check("with both rules", "")
	if _, err := e.RemoveRules("r1"); err != nil {
		t.Fatal(err)
	}
	check("after r1 is removed", "r1")
}
