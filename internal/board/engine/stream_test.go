package engine_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
)

// TestEngine_Stream checks that Stream yields what Facts yields, relation by relation and
// in value order, and that Relations counts it.
func TestEngine_Stream(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	var edges []engine.Fact
	for i := 12; i > 0; i-- { // asserted backwards, so that the order is Stream's own
		edges = append(edges, fact("e"+string(rune('a'+i)), verified, at("edge", "from", i, "to", i+1)))
	}
	edges = append(edges, fact("n1", verified, at("~edge", "from", 1, "to", 1)))
	mustAssert(t, e, edges...)
	mustAddRules(t, e, pathRules(verified)...)

	var want, got []string
	for en := range e.Facts() {
		want = append(want, en.Atom.String()+" "+en.Tier.String())
	}
	var paths [][2]int64
	err := e.Stream(nil, func(en engine.Entry) error {
		got = append(got, en.Atom.String()+" "+en.Tier.String())
		if en.Atom.Pred == "path" {
			from, _ := en.Atom.Get("from")
			to, _ := en.Atom.Get("to")
			paths = append(paths, [2]int64{from.Val.IntVal(), to.Val.IntVal()})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if !slices.Equal(want, sorted) {
		t.Fatalf("Stream yields\n%v\nwant the facts of Facts\n%v", got, want)
	}
	if !slices.IsSortedFunc(paths, func(a, b [2]int64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) || len(paths) != 78 {
		t.Errorf("path facts come %v, want the 78 in numeric order", paths)
	}

	var only []string
	if err := e.Stream(func(pred string, neg bool) bool { return neg }, func(en engine.Entry) error {
		only = append(only, en.Atom.String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(only) != 1 || only[0] != "~edge(from: 1, to: 1)" {
		t.Errorf("Stream of the negated relations = %v, want ~edge(from: 1, to: 1)", only)
	}
	rels := e.Relations()
	wantRels := []engine.Relation{{Pred: "edge", Facts: 12}, {Pred: "edge", Neg: true, Facts: 1}, {Pred: "path", Facts: 78}}
	if !slices.Equal(rels, wantRels) {
		t.Errorf("Relations() = %v, want %v", rels, wantRels)
	}
}

// TestEngine_StreamWide checks Stream on facts too wide for their value ranks to pack in
// 64 bits: 20 arguments.
func TestEngine_StreamWide(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	var want []string
	for i := 9; i >= 0; i-- {
		var kv []any
		for c := range 20 {
			kv = append(kv, fmt.Sprintf("a%02d", c), (i*7+c)%10)
		}
		mustAssert(t, e, fact(fmt.Sprintf("w%d", i), verified, at("wide", kv...)))
	}
	for en := range e.Facts() {
		want = append(want, en.Atom.String())
	}
	slices.SortFunc(want, func(a, b string) int { return cmp.Compare(firstInt(a), firstInt(b)) })
	var got []string
	if err := e.Stream(nil, func(en engine.Entry) error {
		got = append(got, en.Atom.String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Stream yields\n%v\nwant\n%v", got, want)
	}
}

// firstInt is the value of a00 in the text of a wide fact.
func firstInt(s string) int {
	var n int
	fmt.Sscanf(s[strings.Index(s, "a00: ")+5:], "%d", &n)
	return n
}
