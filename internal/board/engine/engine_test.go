package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// pathRules are the transitive closure of edge.
func pathRules(tier contract.Tier) []engine.Rule {
	return []engine.Rule{
		rule("path1", tier, at("path", "from", "X", "to", "Y"), pos(at("edge", "from", "X", "to", "Y"))),
		rule("path2", tier, at("path", "from", "X", "to", "Z"), pos(at("edge", "from", "X", "to", "Y")), pos(at("path", "from", "Y", "to", "Z"))),
	}
}

func TestEngine_Evaluate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		facts []engine.Fact
		rules []engine.Rule
		want  []string
	}{
		{
			name: "subset matching ignores extra fact arguments",
			facts: []engine.Fact{
				fact("f1", verified, at("order", "id", "o1", "total", 5, "note", "x")),
			},
			rules: []engine.Rule{rule("r1", verified, at("known", "id", "I"), pos(at("order", "id", "I")))},
			want:  []string{`known(id: "o1") verified derived`, `order(id: "o1", note: "x", total: 5) verified base`},
		},
		{
			name: "scalars compare strictly",
			facts: []engine.Fact{
				fact("f1", verified, at("n", "v", 1)),
				fact("f2", verified, at("s", "v", "1")),
				fact("f3", verified, at("x", "v", 1.0)),
			},
			rules: []engine.Rule{
				rule("r1", verified, at("same", "v", "V"), pos(at("n", "v", "V")), pos(at("s", "v", "V"))),
				rule("r2", verified, at("same", "v", "V"), pos(at("n", "v", "V")), pos(at("x", "v", "V"))),
			},
			want: []string{`n(v: 1) verified base`, `s(v: "1") verified base`, `x(v: 1.0) verified base`},
		},
		{
			name: "strong negation is a distinct relation",
			facts: []engine.Fact{
				fact("f1", verified, at("~paid", "id", "o1")),
				fact("f2", verified, at("order", "id", "o1")),
				fact("f3", verified, at("order", "id", "o2")),
			},
			rules: []engine.Rule{
				rule("r1", verified, at("unpaid", "id", "I"), pos(at("order", "id", "I")), pos(at("~paid", "id", "I"))),
				rule("r2", verified, at("unknown", "id", "I"), pos(at("order", "id", "I")), not(at("paid", "id", "I")), not(at("~paid", "id", "I"))),
			},
			want: []string{
				`order(id: "o1") verified base`, `order(id: "o2") verified base`,
				`unknown(id: "o2") verified derived`, `unpaid(id: "o1") verified derived`,
				`~paid(id: "o1") verified base`,
			},
		},
		{
			name: "a derived tier is the weakest premise and the rule",
			facts: []engine.Fact{
				fact("f1", verified, at("a", "x", 1)),
				fact("f2", attested, at("b", "x", 1)),
			},
			rules: []engine.Rule{
				rule("r1", verified, at("c", "x", "X"), pos(at("a", "x", "X")), pos(at("b", "x", "X"))),
				rule("r2", asserted, at("d", "x", "X"), pos(at("a", "x", "X"))),
			},
			want: []string{`a(x: 1) verified base`, `b(x: 1) attested base`, `c(x: 1) attested derived`, `d(x: 1) asserted derived`},
		},
		{
			name: "the best derivation wins and base and derived take the stronger",
			facts: []engine.Fact{
				fact("f1", asserted, at("a", "x", 1)),
				fact("f2", attested, at("b", "x", 1)),
				fact("f3", asserted, at("c", "x", 1)),
			},
			rules: []engine.Rule{
				rule("r1", verified, at("c", "x", "X"), pos(at("a", "x", "X"))),
				rule("r2", verified, at("c", "x", "X"), pos(at("b", "x", "X"))),
			},
			want: []string{`a(x: 1) asserted base`, `b(x: 1) attested base`, `c(x: 1) attested base derived`},
		},
		{
			name: "aggregates count distinct bindings so equal amounts both count",
			facts: []engine.Fact{
				fact("f1", verified, at("line", "order", "o1", "id", 1, "amount", 5)),
				fact("f2", attested, at("line", "order", "o1", "id", 2, "amount", 5)),
				fact("f3", verified, at("line", "order", "o2", "id", 3, "amount", 7)),
			},
			rules: []engine.Rule{
				rule("r1", verified, at("total", "order", "O", "sum", "sum(A)", "n", "count(I)"), pos(at("line", "order", "O", "id", "I", "amount", "A"))),
				rule("r2", verified, at("big", "order", "O"), pos(at("total", "order", "O", "sum", "S")), pos(at("gte", "left", "S", "right", 10))),
			},
			want: []string{
				`big(order: "o1") attested derived`,
				`line(amount: 5, id: 1, order: "o1") verified base`,
				`line(amount: 5, id: 2, order: "o1") attested base`,
				`line(amount: 7, id: 3, order: "o2") verified base`,
				`total(n: 1, order: "o2", sum: 7) verified derived`,
				`total(n: 2, order: "o1", sum: 10) attested derived`,
			},
		},
		{
			name: "a guard written after a division still protects it",
			facts: []engine.Fact{
				fact("f1", verified, at("n", "v", 4, "d", 0)),
				fact("f2", verified, at("n", "v", 4, "d", 2)),
			},
			rules: []engine.Rule{rule("r1", verified, at("share", "v", "S"),
				pos(at("n", "v", "V", "d", "D")), pos(at("div", "left", "V", "right", "D", "result", "S")), pos(at("neq", "left", "D", "right", 0)))},
			want: []string{`n(d: 0, v: 4) verified base`, `n(d: 2, v: 4) verified base`, `share(v: 2) verified derived`},
		},
		{
			name:  "recursion reaches the fixpoint",
			facts: []engine.Fact{fact("e1", verified, at("edge", "from", 1, "to", 2)), fact("e2", attested, at("edge", "from", 2, "to", 1))},
			rules: pathRules(verified),
			want: []string{
				`edge(from: 1, to: 2) verified base`, `edge(from: 2, to: 1) attested base`,
				`path(from: 1, to: 1) attested derived`, `path(from: 1, to: 2) verified derived`,
				`path(from: 2, to: 1) attested derived`, `path(from: 2, to: 2) attested derived`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, rulesFirst := range []bool{false, true} {
				e := engine.New(engine.Limits{})
				if rulesFirst {
					mustAddRules(t, e, tt.rules...)
					mustAssert(t, e, tt.facts...)
				} else {
					mustAssert(t, e, tt.facts...)
					mustAddRules(t, e, tt.rules...)
				}
				if diff := cmp.Diff(tt.want, snapshot(e)); diff != "" {
					t.Errorf("rulesFirst=%v facts (-want +got):\n%s", rulesFirst, diff)
				}
			}
		})
	}
}

func TestEngine_AddRulesRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rules []engine.Rule
		code  contract.Code
		teach []string
	}{
		{
			name:  "head variable unbound",
			rules: []engine.Rule{rule("r1", verified, at("p", "x", "X", "y", "Y"), pos(at("q", "x", "X")))},
			code:  contract.CodeRuleUnsafe, teach: []string{"variable Y", "rule r1"},
		},
		{
			name:  "NAF variable unbound",
			rules: []engine.Rule{rule("r1", verified, at("p", "x", "X"), pos(at("q", "x", "X")), not(at("r", "x", "X", "y", "Y")))},
			code:  contract.CodeRuleUnsafe, teach: []string{"variable Y", "not r(", "rule r1"},
		},
		{
			name:  "built-in input unbound",
			rules: []engine.Rule{rule("r1", verified, at("p", "x", "Z"), pos(at("q", "x", "X")), pos(at("add", "left", "X", "right", "Y", "result", "Z")))},
			code:  contract.CodeRuleUnsafe, teach: []string{"variable Y", "add("},
		},
		{
			name: "negation through recursion",
			rules: []engine.Rule{
				rule("r1", verified, at("p", "x", "X"), pos(at("s", "x", "X")), not(at("q", "x", "X"))),
				rule("r2", verified, at("q", "x", "X"), pos(at("p", "x", "X"))),
			},
			code: contract.CodeStratification, teach: []string{"depends on not", "q depends on p"},
		},
		{
			name: "aggregation through recursion",
			rules: []engine.Rule{
				rule("r1", verified, at("n", "c", "count(X)"), pos(at("m", "x", "X"))),
				rule("r2", verified, at("m", "x", "C"), pos(at("n", "c", "C"))),
			},
			code: contract.CodeStratification, teach: []string{"aggregates m", "m depends on n"},
		},
		{
			name:  "duplicate id",
			rules: []engine.Rule{rule("r1", verified, at("p", "x", 1)), rule("r1", verified, at("p", "x", 2))},
			code:  contract.CodeNodeConflict, teach: []string{"r1"},
		},
		{
			name:  "built-in head",
			rules: []engine.Rule{rule("r1", verified, at("add", "x", 1))},
			code:  contract.CodeUnknownBuiltin, teach: []string{"built-in"},
		},
		{
			name:  "too wide",
			rules: []engine.Rule{rule("r1", verified, at("p", "x", "X"), slices.Repeat([]engine.Literal{pos(at("q", "x", "X"))}, 17)...)},
			code:  contract.CodeResourceLimit, teach: []string{"17 body literals"},
		},
		{
			name:  "no tier",
			rules: []engine.Rule{rule("r1", 0, at("p", "x", 1))},
			code:  contract.CodeInvalidArgument, teach: []string{"tier"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := engine.New(engine.Limits{})
			mustAssert(t, e, fact("f1", verified, at("q", "x", 1)))
			before := snapshot(e)
			_, err := e.AddRules(tt.rules...)
			if got := contract.CodeOf(err); got != tt.code {
				t.Fatalf("AddRules code = %q (%v), want %q", got, err, tt.code)
			}
			for _, s := range tt.teach {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("AddRules error %q does not mention %q", err, s)
				}
			}
			if diff := cmp.Diff(before, snapshot(e)); diff != "" || len(e.Rules()) != 0 {
				t.Errorf("refused AddRules changed the engine (-before +after):\n%s", diff)
			}
		})
	}
}

func TestEngine_MutationErrors(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAddRules(t, e, pathRules(verified)...)
	mustAssert(t, e, fact("e1", verified, at("edge", "from", 1, "to", 2)))
	derived := engine.DerivedID(at("path", "from", 1, "to", 2))
	tests := []struct {
		name string
		run  func() error
		code contract.Code
	}{
		{"assert id in use", func() error { _, err := e.Assert(fact("e1", verified, at("edge", "from", 5, "to", 6))); return err }, contract.CodeNodeConflict},
		{"assert non-ground", func() error { _, err := e.Assert(fact("e9", verified, at("edge", "from", "X", "to", 6))); return err }, contract.CodeInvalidArgument},
		{"assert without tier", func() error { _, err := e.Assert(fact("e9", 0, at("edge", "from", 5, "to", 6))); return err }, contract.CodeInvalidArgument},
		{"assert a built-in", func() error { _, err := e.Assert(fact("e9", verified, at("lt", "left", 1, "right", 2))); return err }, contract.CodeInvalidArgument},
		{"retract unknown", func() error { _, err := e.Retract("nope"); return err }, contract.CodeNodeNotFound},
		{"retract derived", func() error { _, err := e.Retract(derived); return err }, contract.CodeNotRetractable},
		{"remove unknown rule", func() error { _, err := e.RemoveRules("nope"); return err }, contract.CodeNodeNotFound},
		{"explain unknown", func() error { _, err := e.Explain("nope"); return err }, contract.CodeNodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contract.CodeOf(tt.run()); got != tt.code {
				t.Errorf("code = %q, want %q", got, tt.code)
			}
		})
	}
}

func TestEngine_ExplainAndIDs(t *testing.T) {
	t.Parallel()
	build := func() *engine.Engine {
		e := engine.New(engine.Limits{})
		mustAddRules(t, e, pathRules(attested)...)
		mustAssert(t, e,
			fact("e1", verified, at("edge", "from", 1, "to", 2)),
			fact("e2", verified, at("edge", "from", 2, "to", 3)),
		)
		return e
	}
	e := build()
	id := engine.DerivedID(at("path", "from", 1, "to", 3))
	got, err := e.Explain(id)
	if err != nil {
		t.Fatal(err)
	}
	var render func(d *engine.Derivation) string
	render = func(d *engine.Derivation) string {
		s := d.Atom.String() + "@" + d.Tier.String()
		if d.Base {
			return s + "[" + d.ID + "]"
		}
		var ps []string
		for _, p := range d.Premises {
			ps = append(ps, render(p))
		}
		return s + " by " + d.Rule + " {" + strings.Join(ps, "; ") + "}"
	}
	want := "path(from: 1, to: 3)@attested by path2 {edge(from: 1, to: 2)@verified[e1]; path(from: 2, to: 3)@attested by path1 {edge(from: 2, to: 3)@verified[e2]}}"
	if s := render(got); s != want {
		t.Errorf("Explain =\n%s\nwant\n%s", s, want)
	}
	if en, ok := build().Lookup(id); !ok || en.ID != id || !en.Derived {
		t.Errorf("a rebuilt engine's Lookup(%s) = %+v, %v", id, en, ok)
	}
	if !strings.HasPrefix(id, "d_") || len(id) != 22 {
		t.Errorf("DerivedID = %q, want d_ and 20 hex digits", id)
	}
}

func TestEngine_MatchAndHolds(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAssert(t, e,
		fact("f1", verified, at("pair", "a", 1, "b", 1, "c", "x")),
		fact("f2", verified, at("pair", "a", 1, "b", 2)),
		fact("f3", verified, at("~pair", "a", 1, "b", 1)),
	)
	var got []string
	for en, b := range e.Match(at("pair", "a", "X", "b", "X")) {
		got = append(got, en.ID+" X="+b["X"].String())
	}
	if diff := cmp.Diff([]string{"f1 X=1"}, got); diff != "" {
		t.Errorf("Match (-want +got):\n%s", diff)
	}
	if _, ok := e.Holds(at("pair", "a", 1, "b", 2)); !ok {
		t.Error("Holds(pair(a: 1, b: 2)) = false")
	}
	if _, ok := e.Holds(at("pair", "a", 1)); ok {
		t.Error("Holds(pair(a: 1)) = true; Holds needs the exact atom")
	}
	if en, ok := e.Holds(at("~pair", "a", 1, "b", 1)); !ok || en.ID != "f3" {
		t.Errorf("Holds(~pair) = %v, %v", en, ok)
	}
}

func TestQuery_NAFAndRows(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAssert(t, e,
		fact("o1", verified, at("order", "id", "o1")),
		fact("o2", asserted, at("order", "id", "o2")),
		fact("p1", verified, at("paid", "id", "o1")),
	)
	rows, err := e.Query([]engine.Literal{pos(at("order", "id", "I")), not(at("paid", "id", "I"))})
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Row{{Bindings: engine.Bindings{"I": engine.String("o2")}, Premises: []string{"o2"}, Tier: asserted}}
	if diff := cmp.Diff(want, rows, cmp.Comparer(func(a, b engine.Value) bool { return a == b })); diff != "" {
		t.Errorf("Query (-want +got):\n%s", diff)
	}
	if _, err := e.Query([]engine.Literal{not(at("paid", "id", "I"))}); contract.CodeOf(err) != contract.CodeRuleUnsafe {
		t.Errorf("unsafe query error = %v, want rule_unsafe", err)
	}
}

// TestEngine_MalformedInput feeds atoms built by hand, bypassing NewAtom: each is refused
// with a code, never a panic.
func TestEngine_MalformedInput(t *testing.T) {
	t.Parallel()
	one := engine.C(engine.String("x"))
	tests := []struct {
		name string
		atom engine.Atom
		code contract.Code
	}{
		{"empty predicate", engine.Atom{Args: []engine.Arg{{Name: "a", Term: one}}}, contract.CodeInvalidArgument},
		{"upper-case predicate", engine.Atom{Pred: "P", Args: []engine.Arg{{Name: "a", Term: one}}}, contract.CodeInvalidArgument},
		{"duplicate argument", engine.Atom{Pred: "p", Args: []engine.Arg{{Name: "a", Term: one}, {Name: "a", Term: one}}}, contract.CodeInvalidArgument},
		{"zero constant", engine.Atom{Pred: "p", Args: []engine.Arg{{Name: "a"}}}, contract.CodeInvalidArgument},
		{"variable", engine.Atom{Pred: "p", Args: []engine.Arg{{Name: "a", Term: engine.V("X")}}}, contract.CodeInvalidArgument},
		{"aggregate", engine.Atom{Pred: "p", Args: []engine.Arg{{Name: "a", Term: engine.Term{Var: "X", Agg: "sum"}}}}, contract.CodeInvalidArgument},
		{"too many arguments", engine.Atom{Pred: "p", Args: manyArgs(65)}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := engine.New(engine.Limits{})
			_, err := e.Assert(engine.Fact{ID: "f1", Atom: tt.atom, Tier: verified})
			if got := contract.CodeOf(err); got != tt.code {
				t.Errorf("Assert code = %q (%v), want %q", got, err, tt.code)
			}
			if _, err := e.Query([]engine.Literal{{Atom: tt.atom}}); err == nil && tt.name != "variable" {
				t.Errorf("Query accepted %s", tt.name)
			}
			for range e.Match(tt.atom) {
				t.Errorf("Match yielded a fact on an empty engine")
			}
			if _, ok := e.Holds(tt.atom); ok {
				t.Errorf("Holds(%s) = true on an empty engine", tt.name)
			}
			_, err = e.AddRules(engine.Rule{ID: "r1", Tier: verified, Head: engine.Atom{Pred: "h", Args: []engine.Arg{{Name: "a", Term: one}}}, Body: []engine.Literal{{Atom: tt.atom}}})
			if err == nil && tt.name != "variable" {
				t.Errorf("AddRules accepted a body literal with %s", tt.name)
			}
		})
	}
}

func manyArgs(n int) []engine.Arg {
	args := make([]engine.Arg, n)
	for i := range args {
		args[i] = engine.Arg{Name: "a" + strings.Repeat("b", i), Term: engine.C(engine.Bool(true))}
	}
	return args
}

// TestEngine_FactsWhileMutating checks that Facts skips a fact removed while ranging, even
// when a fact asserted meanwhile takes its place in storage.
func TestEngine_FactsWhileMutating(t *testing.T) {
	t.Parallel()
	e := engine.New(engine.Limits{})
	mustAssert(t, e, fact("a", verified, at("p", "n", 1)), fact("b", verified, at("p", "n", 2)))
	var got []string
	for en := range e.Facts() {
		got = append(got, en.Atom.String())
		if len(got) == 1 {
			if _, err := e.Retract("b"); err != nil {
				t.Fatal(err)
			}
			mustAssert(t, e, fact("c", verified, at("p", "n", 3)))
		}
	}
	if want := []string{`p(n: 1)`}; !slices.Equal(got, want) {
		t.Errorf("Facts while mutating = %q, want %q", got, want)
	}
}
