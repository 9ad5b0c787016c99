package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Tests of truth maintenance: what retraction, rule removal and failure leave behind.

func TestEngine_RetractMaintains(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		retract []string
		want    []string
		delta   engine.Delta
	}{
		{
			name:    "what rested only on the fact goes",
			retract: []string{"e2"},
			want: []string{
				`edge(from: 1, to: 2) verified base`, `edge(from: 3, to: 4) asserted base`, `edge(from: 1, to: 4) attested base`,
				`path(from: 1, to: 2) verified derived`, `path(from: 1, to: 4) attested derived`, `path(from: 3, to: 4) asserted derived`,
			},
		},
		{
			name:    "an alternative derivation keeps a fact at its new best tier",
			retract: []string{"e4"},
			want: []string{
				`edge(from: 1, to: 2) verified base`, `edge(from: 2, to: 3) verified base`, `edge(from: 3, to: 4) asserted base`,
				`path(from: 1, to: 2) verified derived`, `path(from: 1, to: 3) verified derived`, `path(from: 1, to: 4) asserted derived`,
				`path(from: 2, to: 3) verified derived`, `path(from: 2, to: 4) asserted derived`, `path(from: 3, to: 4) asserted derived`,
			},
		},
		{
			name:    "retracting everything empties the board",
			retract: []string{"e1", "e2", "e3", "e4"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := engine.New(engine.Limits{})
			mustAddRules(t, e, pathRules(verified)...)
			mustAssert(t, e,
				fact("e1", verified, at("edge", "from", 1, "to", 2)),
				fact("e2", verified, at("edge", "from", 2, "to", 3)),
				fact("e3", asserted, at("edge", "from", 3, "to", 4)),
				fact("e4", attested, at("edge", "from", 1, "to", 4)),
			)
			if _, err := e.Retract(tt.retract...); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, snapshot(e)); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEngine_Delta(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAddRules(t, e, pathRules(verified)...)
	d := mustAssert(t, e, fact("e1", attested, at("edge", "from", 1, "to", 2)))
	if got := deltaText(d); !slices.Equal(got, []string{"+edge(from: 1, to: 2) attested", "+path(from: 1, to: 2) attested"}) {
		t.Errorf("Assert delta = %v", got)
	}
	d = mustAssert(t, e, fact("e2", verified, at("edge", "from", 1, "to", 2)))
	if got := deltaText(d); !slices.Equal(got, []string{"=edge(from: 1, to: 2) verified", "=path(from: 1, to: 2) verified"}) {
		t.Errorf("stronger Assert delta = %v", got)
	}
	d, err := e.Retract("e1", "e2")
	if err != nil {
		t.Fatal(err)
	}
	if got := deltaText(d); !slices.Equal(got, []string{"-edge(from: 1, to: 2) verified", "-path(from: 1, to: 2) verified"}) {
		t.Errorf("Retract delta = %v", got)
	}
}

func deltaText(d engine.Delta) []string {
	var out []string
	for _, en := range d.Added {
		out = append(out, "+"+en.Atom.String()+" "+en.Tier.String())
	}
	for _, en := range d.Removed {
		out = append(out, "-"+en.Atom.String()+" "+en.Tier.String())
	}
	for _, en := range d.Retier {
		out = append(out, "="+en.Atom.String()+" "+en.Tier.String())
	}
	slices.Sort(out)
	return out
}

// TestEngine_FailedMutationLeavesStateUnchanged checks all-or-nothing: a mutation refused
// during evaluation leaves facts, ids and rules exactly as they were.
func TestEngine_FailedMutationLeavesStateUnchanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limits engine.Limits
		setup  func(t *testing.T, e *engine.Engine)
		mutate func(e *engine.Engine) error
		code   contract.Code
	}{
		{
			name: "arithmetic overflow on assert",
			setup: func(t *testing.T, e *engine.Engine) {
				mustAddRules(t, e, rule("r1", verified, at("double", "v", "D"), pos(at("n", "v", "V")), pos(at("mul", "left", "V", "right", 2, "result", "D"))))
				mustAssert(t, e, fact("f1", verified, at("n", "v", 3)))
			},
			mutate: func(e *engine.Engine) error {
				_, err := e.Assert(fact("f2", verified, at("n", "v", 4)), fact("f3", verified, at("n", "v", engine.MaxExactInt)))
				return err
			},
			code: contract.CodeArithmetic,
		},
		{
			name: "division by zero reached through a retraction",
			setup: func(t *testing.T, e *engine.Engine) {
				mustAddRules(t, e, rule("r1", verified, at("share", "v", "S"), pos(at("n", "v", "V", "d", "D")), not(at("blocked", "d", "D")), pos(at("div", "left", "V", "right", "D", "result", "S"))))
				mustAssert(t, e, fact("f1", verified, at("n", "v", 4, "d", 0)), fact("b1", verified, at("blocked", "d", 0)), fact("f2", verified, at("n", "v", 4, "d", 2)))
			},
			mutate: func(e *engine.Engine) error { _, err := e.Retract("b1"); return err },
			code:   contract.CodeArithmetic,
		},
		{
			name:   "fact cap",
			limits: engine.Limits{MaxFacts: 12},
			setup: func(t *testing.T, e *engine.Engine) {
				mustAddRules(t, e, pathRules(verified)...)
				mustAssert(t, e, fact("e1", verified, at("edge", "from", 1, "to", 2)), fact("e2", verified, at("edge", "from", 2, "to", 3)))
			},
			mutate: func(e *engine.Engine) error {
				_, err := e.Assert(fact("e3", verified, at("edge", "from", 3, "to", 4)), fact("e4", verified, at("edge", "from", 4, "to", 5)), fact("e5", verified, at("edge", "from", 5, "to", 6)))
				return err
			},
			code: contract.CodeResourceLimit,
		},
		{
			name:   "iteration cap on an unbounded counter",
			limits: engine.Limits{MaxIterations: 50},
			setup: func(t *testing.T, e *engine.Engine) {
				mustAssert(t, e, fact("s1", verified, at("start", "n", 0)))
			},
			mutate: func(e *engine.Engine) error {
				_, err := e.AddRules(
					rule("c1", verified, at("count", "n", "N"), pos(at("start", "n", "N"))),
					rule("c2", verified, at("count", "n", "M"), pos(at("count", "n", "N")), pos(at("add", "left", "N", "right", 1, "result", "M"))),
				)
				return err
			},
			code: contract.CodeResourceLimit,
		},
		{
			name: "remove rules that unblock an arithmetic error",
			setup: func(t *testing.T, e *engine.Engine) {
				mustAddRules(t, e,
					rule("g1", verified, at("guard", "d", 0), pos(at("n", "d", 0))),
					rule("r1", verified, at("share", "v", "S"), pos(at("n", "v", "V", "d", "D")), not(at("guard", "d", "D")), pos(at("div", "left", "V", "right", "D", "result", "S"))))
				mustAssert(t, e, fact("f1", verified, at("n", "v", 4, "d", 0)))
			},
			mutate: func(e *engine.Engine) error { _, err := e.RemoveRules("g1"); return err },
			code:   contract.CodeArithmetic,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := engine.New(tt.limits)
			tt.setup(t, e)
			before, rules, n := snapshot(e), e.Rules(), e.Len()
			err := tt.mutate(e)
			if got := contract.CodeOf(err); got != tt.code {
				t.Fatalf("mutation code = %q (%v), want %q", got, err, tt.code)
			}
			if diff := cmp.Diff(before, snapshot(e)); diff != "" {
				t.Errorf("facts changed (-before +after):\n%s", diff)
			}
			if len(rules) != len(e.Rules()) || n != e.Len() {
				t.Errorf("rules %d→%d, Len %d→%d", len(rules), len(e.Rules()), n, e.Len())
			}
			for en := range e.Facts() {
				if got, ok := e.Lookup(en.ID); !ok || got.Atom.String() != en.Atom.String() {
					t.Errorf("Lookup(%s) = %v, %v after rollback", en.ID, got, ok)
				}
			}
		})
	}
}

func TestEngine_RemoveRules(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAssert(t, e, fact("e1", verified, at("edge", "from", 1, "to", 2)), fact("e2", verified, at("edge", "from", 2, "to", 3)))
	mustAddRules(t, e, pathRules(verified)...)
	mustAddRules(t, e, rule("n1", verified, at("isolated", "n", 3), not(at("path", "from", 3)), pos(at("edge", "to", 3))))
	if _, err := e.RemoveRules("path2"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`edge(from: 1, to: 2) verified base`, `edge(from: 2, to: 3) verified base`,
		`isolated(n: 3) verified derived`,
		`path(from: 1, to: 2) verified derived`, `path(from: 2, to: 3) verified derived`,
	}
	if diff := cmp.Diff(want, snapshot(e)); diff != "" {
		t.Errorf("after RemoveRules(path2) (-want +got):\n%s", diff)
	}
	if _, err := e.RemoveRules("path1", "n1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[:2], snapshot(e)); diff != "" {
		t.Errorf("after RemoveRules(path1, n1) (-want +got):\n%s", diff)
	}
	if got := len(e.Rules()); got != 0 {
		t.Errorf("Rules() has %d rules, want 0", got)
	}
}

func TestEngine_AggregateMaintenance(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAddRules(t, e,
		rule("r1", verified, at("total", "order", "O", "sum", "sum(A)", "n", "count(I)"), pos(at("line", "order", "O", "id", "I", "amount", "A"))),
		rule("r2", verified, at("top", "amount", "max(S)"), pos(at("total", "order", "O", "sum", "S"))),
	)
	mustAssert(t, e,
		fact("l1", verified, at("line", "order", "o1", "id", 1, "amount", 5)),
		fact("l2", attested, at("line", "order", "o1", "id", 2, "amount", 5)),
		fact("l3", verified, at("line", "order", "o2", "id", 3, "amount", 7)),
	)
	steps := []struct {
		name string
		run  func() error
		want []string
	}{
		{"initial", func() error { return nil }, []string{
			`top(amount: 10) attested derived`,
			`total(n: 1, order: "o2", sum: 7) verified derived`,
			`total(n: 2, order: "o1", sum: 10) attested derived`,
		}},
		{"retracting a line shrinks its group and strengthens it", func() error { _, err := e.Retract("l2"); return err }, []string{
			`top(amount: 7) verified derived`,
			`total(n: 1, order: "o1", sum: 5) verified derived`,
			`total(n: 1, order: "o2", sum: 7) verified derived`,
		}},
		{"a new line joins its group", func() error {
			_, err := e.Assert(fact("l4", asserted, at("line", "order", "o2", "id", 4, "amount", 1)))
			return err
		}, []string{
			`top(amount: 8) asserted derived`,
			`total(n: 1, order: "o1", sum: 5) verified derived`,
			`total(n: 2, order: "o2", sum: 8) asserted derived`,
		}},
		{"removing the rule removes every group", func() error { _, err := e.RemoveRules("r2"); return err }, []string{
			`total(n: 1, order: "o1", sum: 5) verified derived`,
			`total(n: 2, order: "o2", sum: 8) asserted derived`,
		}},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var got []string
		for _, s := range snapshot(e) {
			if !strings.HasPrefix(s, "line(") {
				got = append(got, s)
			}
		}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
	}
	d, err := e.Explain(engine.DerivedID(at("total", "order", "o2", "sum", 8, "n", 2)))
	if err != nil {
		t.Fatal(err)
	}
	var prem []string
	for _, p := range d.Premises {
		prem = append(prem, p.ID)
	}
	if d.Rule != "r1" || !slices.Equal(prem, []string{"l3", "l4"}) {
		t.Errorf("Explain(total o2) = rule %s premises %v, want r1 [l3 l4]", d.Rule, prem)
	}
}

// TestEngine_ExplainAfterChurn retracts and asserts edges of a graph with cycles and
// alternative paths, so that facts leave storage and new ones take their slots, and checks
// after each mutation that every derivation Explain gives is a valid step of its rule from
// premises that hold: a premise left naming a reused slot would name an unrelated fact.
func TestEngine_ExplainAfterChurn(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAddRules(t, e, pathRules(verified)...)
	const nodes = 7
	held := map[string]bool{}
	val := func(a engine.Atom, name string) string {
		tm, _ := a.Get(name)
		return tm.Val.String()
	}
	var check func(d *engine.Derivation)
	check = func(d *engine.Derivation) {
		if d.Base || d.Rule == "" {
			return
		}
		if d.Atom.Pred != "path" {
			t.Fatalf("%s derived by %s", d.Atom, d.Rule)
		}
		for _, p := range d.Premises {
			if _, ok := e.Holds(p.Atom); !ok {
				t.Fatalf("%s cites %s, which does not hold", d.Atom, p.Atom)
			}
		}
		from, to := val(d.Atom, "from"), val(d.Atom, "to")
		ok := false
		switch d.Rule {
		case "path1":
			ok = len(d.Premises) == 1 && d.Premises[0].Atom.Pred == "edge" &&
				val(d.Premises[0].Atom, "from") == from && val(d.Premises[0].Atom, "to") == to
		case "path2":
			ok = len(d.Premises) == 2 && d.Premises[0].Atom.Pred == "edge" && d.Premises[1].Atom.Pred == "path" &&
				val(d.Premises[0].Atom, "from") == from && val(d.Premises[1].Atom, "to") == to &&
				val(d.Premises[0].Atom, "to") == val(d.Premises[1].Atom, "from")
		}
		if !ok {
			t.Fatalf("%s by %s does not follow from %d premises", d.Atom, d.Rule, len(d.Premises))
		}
		for _, p := range d.Premises {
			check(p)
		}
	}
	for step := range 300 {
		// A fixed walk over the edges of the complete graph: each step toggles one edge.
		k := (step * 17) % (nodes * nodes)
		from, to := k/nodes, k%nodes
		id := fmt.Sprintf("e%d_%d", from, to)
		if held[id] {
			if _, err := e.Retract(id); err != nil {
				t.Fatal(err)
			}
		} else {
			mustAssert(t, e, fact(id, verified, at("edge", "from", from, "to", to)))
		}
		held[id] = !held[id]
		for en := range e.Facts() {
			d, err := e.Explain(en.ID)
			if err != nil {
				t.Fatalf("step %d: Explain(%s): %v", step, en.ID, err)
			}
			check(d)
		}
	}
}
