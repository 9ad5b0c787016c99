package engine_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// The property tests run the engine against naiveEval on random programs over a small
// universe (values 0..3), so that recursion, negation, strong negation, arithmetic,
// aggregates, subset matching and tiers all meet often.

var (
	basePreds    = []string{"b0", "b1", "~b0"}
	derivedPreds = []string{"d0", "d1", "d2", "~d0"}
	allPreds     = append(slices.Clone(basePreds), derivedPreds...)
	varPool      = []string{"X", "Y", "Z"}
)

func genTier(t *rapid.T, label string) contract.Tier {
	return contract.Tier(rapid.IntRange(1, 7).Draw(t, label))
}

func genFact(t *rapid.T, id string) engine.Fact {
	pred := rapid.SampledFrom(append(slices.Clone(basePreds), "d0", "d1")).Draw(t, "fpred")
	kv := []any{"a", rapid.IntRange(0, 2).Draw(t, "fa"), "b", rapid.IntRange(0, 2).Draw(t, "fb")}
	if rapid.IntRange(0, 4).Draw(t, "extra") == 0 {
		kv = append(kv, "c", rapid.IntRange(0, 1).Draw(t, "fc"))
	}
	return fact(id, genTier(t, "ftier"), at(pred, kv...))
}

// genArg draws a variable from the pool or a small constant.
func genArg(t *rapid.T, vars []string, label string) any {
	if len(vars) > 0 && rapid.IntRange(0, 5).Draw(t, label+"k") > 0 {
		return rapid.SampledFrom(vars).Draw(t, label+"v")
	}
	return rapid.IntRange(0, 2).Draw(t, label+"c")
}

func genRule(t *rapid.T, id string) engine.Rule {
	var body []engine.Literal
	bound := map[string]bool{}
	n := rapid.IntRange(1, 2).Draw(t, "npos")
	for i := 0; i < n; i++ {
		pred := rapid.SampledFrom(append(allPreds, "b0", "b1", "b0", "d0")).Draw(t, "bpred")
		kv := []any{"a", genArg(t, varPool, "ba")}
		if rapid.IntRange(0, 3).Draw(t, "subset") > 0 {
			kv = append(kv, "b", genArg(t, varPool, "bb"))
		}
		for k := 1; k < len(kv); k += 2 {
			if v, ok := kv[k].(string); ok {
				bound[v] = true
			}
		}
		body = append(body, pos(at(pred, kv...)))
	}
	var vars []string
	for _, v := range varPool {
		if bound[v] {
			vars = append(vars, v)
		}
	}
	if len(vars) > 0 && rapid.IntRange(0, 2).Draw(t, "producer") == 0 {
		op := rapid.SampledFrom([]string{"add", "sub", "mul", "div"}).Draw(t, "op")
		body = append(body,
			pos(at(op, "left", genArg(t, vars, "pl"), "right", genArg(t, vars, "pr"), "result", "W")),
			pos(at("lt", "left", "W", "right", 3)),
			pos(at("gte", "left", "W", "right", 0)),
		)
		vars = append(vars, "W")
	}
	if len(vars) > 0 && rapid.IntRange(0, 2).Draw(t, "guard") == 0 {
		g := rapid.SampledFrom([]string{"neq", "lt", "lte", "eq"}).Draw(t, "g")
		l := pos(at(g, "left", genArg(t, vars, "gl"), "right", genArg(t, vars, "gr")))
		l.NAF = rapid.Bool().Draw(t, "gnaf")
		body = append(body, l)
	}
	if rapid.IntRange(0, 2).Draw(t, "naf") == 0 {
		pred := rapid.SampledFrom(allPreds).Draw(t, "npred")
		kv := []any{"a", genArg(t, vars, "na")}
		if rapid.Bool().Draw(t, "nb") {
			kv = append(kv, "b", genArg(t, vars, "nbv"))
		}
		body = append(body, not(at(pred, kv...)))
	}
	body = rapid.Permutation(body).Draw(t, "order")
	head := rapid.SampledFrom(derivedPreds).Draw(t, "hpred")
	if len(vars) > 0 && rapid.IntRange(0, 4).Draw(t, "agg") == 0 {
		fn := rapid.SampledFrom([]string{"count", "sum"}).Draw(t, "aggfn")
		return rule(id, genTier(t, "rtier"), at(head, "a", genArg(t, vars, "ha"), "n", fn+"("+rapid.SampledFrom(vars).Draw(t, "aggv")+")"), body...)
	}
	return rule(id, genTier(t, "rtier"), at(head, "a", genArg(t, vars, "ha"), "b", genArg(t, vars, "hb")), body...)
}

// checkAgainstNaive compares the engine with naiveEval over the same rules and facts.
func checkAgainstNaive(t *rapid.T, e *engine.Engine, rules []engine.Rule, facts []engine.Fact) {
	want, err := naiveEval(rules, facts)
	if err != nil {
		t.Fatalf("naive: %v", err)
	}
	if diff := cmp.Diff(want, fullSnapshot(e)); diff != "" {
		t.Fatalf("engine disagrees with the naive evaluator (-naive +engine):\n%s\nrules:\n%s", diff, ruleText(rules))
	}
	for en := range e.Facts() {
		d, err := e.Explain(en.ID)
		if err != nil || d.Tier != en.Tier {
			t.Fatalf("Explain(%s) = %v, %v; want tier %v", en.ID, d, err, en.Tier)
		}
	}
}

func ruleText(rules []engine.Rule) string {
	s := ""
	for _, r := range rules {
		s += fmt.Sprintf("  %s [%s] %s\n", r.ID, r.Tier, r)
	}
	return s
}

// naiveCode is the code the engine must refuse with when naiveEval fails, or "".
func naiveCode(rules []engine.Rule, facts []engine.Fact) contract.Code {
	_, err := naiveEval(rules, facts)
	switch err {
	case nil:
		return ""
	case errNaiveUnstratified:
		return contract.CodeStratification
	case errNaiveArithmetic:
		return contract.CodeArithmetic
	}
	panic(err)
}

// expect checks one mutation: when the naive evaluator refuses the state it leads to, the
// engine must refuse with the same code and stay as it was; otherwise it must agree.
func expect(t *rapid.T, e *engine.Engine, before []string, err error, rules []engine.Rule, facts []engine.Fact) bool {
	want := naiveCode(rules, facts)
	if got := contract.CodeOf(err); got != want {
		t.Fatalf("engine error %v, want code %q\nrules:\n%s", err, want, ruleText(rules))
	}
	if err != nil {
		if diff := cmp.Diff(before, snapshot(e)); diff != "" {
			t.Fatalf("refused mutation changed the engine (-before +after):\n%s", diff)
		}
		return false
	}
	checkAgainstNaive(t, e, rules, facts)
	return true
}

func TestEngine_AgreesWithNaive(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		nf := rapid.IntRange(4, 24).Draw(t, "nfacts")
		var facts []engine.Fact
		for i := 0; i < nf; i++ {
			facts = append(facts, genFact(t, fmt.Sprintf("f%d", i)))
		}
		nr := rapid.IntRange(2, 6).Draw(t, "nrules")
		var rules []engine.Rule
		for i := 0; i < nr; i++ {
			rules = append(rules, genRule(t, fmt.Sprintf("r%d", i)))
		}
		e := engine.New(engine.Limits{})
		var err error
		if rapid.Bool().Draw(t, "rulesFirst") {
			if _, err = e.AddRules(rules...); err == nil {
				_, err = e.Assert(facts...)
			}
		} else {
			if _, err = e.Assert(facts...); err == nil {
				_, err = e.AddRules(rules...)
			}
		}
		if want := naiveCode(rules, facts); contract.CodeOf(err) != want {
			t.Fatalf("engine error %v, want code %q\nrules:\n%s", err, want, ruleText(rules))
		}
		if err != nil {
			return
		}
		checkAgainstNaive(t, e, rules, facts)
		// Retract a few facts at once and compare again.
		var ids []string
		rest := slices.Clone(facts)
		for i := rapid.IntRange(0, 3).Draw(t, "nretract"); i > 0 && len(rest) > 0; i-- {
			k := rapid.IntRange(0, len(rest)-1).Draw(t, "retract")
			ids = append(ids, rest[k].ID)
			rest = slices.Delete(rest, k, k+1)
		}
		before := snapshot(e)
		_, err = e.Retract(ids...)
		expect(t, e, before, err, rules, rest)
	})
}

// TestEngine_IncrementalAgreesWithRecompute applies random Assert, Retract, AddRules and
// RemoveRules and, after each, compares the engine with a from-scratch recomputation; a
// refused mutation (stratification, arithmetic) must leave the engine exactly as it was.
func TestEngine_IncrementalAgreesWithRecompute(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		e := engine.New(engine.Limits{})
		var facts []engine.Fact
		var rules []engine.Rule
		if rapid.Bool().Draw(t, "recursive") {
			// A transitive closure makes deletion through recursion, where DRed must
			// over-delete and rederive, common.
			rules = []engine.Rule{
				rule("t1", genTier(t, "t1tier"), at("d1", "a", "X", "b", "Y"), pos(at("b0", "a", "X", "b", "Y"))),
				rule("t2", genTier(t, "t2tier"), at("d1", "a", "X", "b", "Z"), pos(at("b0", "a", "X", "b", "Y")), pos(at("d1", "a", "Y", "b", "Z"))),
			}
			if _, err := e.AddRules(rules...); err != nil {
				t.Fatal(err)
			}
		}
		next := 0
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for s := 0; s < steps; s++ {
			before := snapshot(e)
			next++
			nextFacts, nextRules := facts, rules
			var err error
			op := rapid.IntRange(0, 9).Draw(t, "op")
			switch {
			case op < 4:
				f := genFact(t, fmt.Sprintf("f%d", next))
				_, err = e.Assert(f)
				nextFacts = append(slices.Clone(facts), f)
			case op < 6 && len(facts) > 0:
				i := rapid.IntRange(0, len(facts)-1).Draw(t, "retract")
				_, err = e.Retract(facts[i].ID)
				nextFacts = slices.Delete(slices.Clone(facts), i, i+1)
			case op < 8:
				r := genRule(t, fmt.Sprintf("r%d", next))
				_, err = e.AddRules(r)
				nextRules = append(slices.Clone(rules), r)
			case len(rules) > 0:
				i := rapid.IntRange(0, len(rules)-1).Draw(t, "remove")
				_, err = e.RemoveRules(rules[i].ID)
				nextRules = slices.Delete(slices.Clone(rules), i, i+1)
			}
			if expect(t, e, before, err, nextRules, nextFacts) {
				facts, rules = nextFacts, nextRules
			}
		}
	})
}
