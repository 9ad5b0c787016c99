package engine_test

import (
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// This file is a deliberately naive evaluator, the oracle of the property tests: it shares
// no code with the engine beyond the AST, and recomputes every stratum from scratch, by
// enumerating every combination of facts, until nothing changes. It supports the built-ins
// the random programs use (add sub mul on integers; eq neq lt lte gt gte), NAF, strong
// negation, and count/sum aggregates.

var (
	errNaiveUnstratified = errors.New("naive: not stratifiable")
	errNaiveArithmetic   = errors.New("naive: no exact result")
)

type naiveFact struct {
	atom     engine.Atom
	baseTier contract.Tier
	derTier  contract.Tier
}

func relName(a engine.Atom) string {
	if a.Neg {
		return "~" + a.Pred
	}
	return a.Pred
}

func isNaiveBuiltin(p string) bool {
	switch p {
	case "add", "sub", "mul", "div", "eq", "neq", "lt", "lte", "gt", "gte":
		return true
	}
	return false
}

func strongest(a, b contract.Tier) contract.Tier {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	return min(a, b)
}

// naiveEval returns the fixpoint rendered like fullSnapshot().
func naiveEval(rules []engine.Rule, facts []engine.Fact) ([]string, error) {
	db := map[string]*naiveFact{}
	for _, f := range facts {
		k := f.Atom.String()
		nf := db[k]
		if nf == nil {
			nf = &naiveFact{atom: f.Atom}
			db[k] = nf
		}
		nf.baseTier = strongest(nf.baseTier, f.Tier)
	}
	// Levels: head ≥ positive body, head > NAF body and > aggregated body.
	level := map[string]int{}
	for changed, rounds := true, 0; changed; rounds++ {
		if rounds > 4*len(rules)+4 {
			return nil, errNaiveUnstratified
		}
		changed = false
		for _, r := range rules {
			h := relName(r.Head)
			agg := isAggRule(r)
			for _, l := range r.Body {
				if isNaiveBuiltin(l.Atom.Pred) {
					continue
				}
				need := level[relName(l.Atom)]
				if l.NAF || agg {
					need++
				}
				if level[h] < need {
					level[h] = need
					changed = true
				}
			}
		}
	}
	maxLevel := 0
	for _, l := range level {
		maxLevel = max(maxLevel, l)
	}
	for lv := 0; lv <= maxLevel; lv++ {
		for _, r := range rules {
			if level[relName(r.Head)] == lv && isAggRule(r) {
				if err := naiveAggregate(db, r); err != nil {
					return nil, err
				}
			}
		}
		for changed := true; changed; {
			changed = false
			for _, r := range rules {
				if level[relName(r.Head)] != lv || isAggRule(r) {
					continue
				}
				bs, err := naiveBindings(db, r.Body)
				if err != nil {
					return nil, err
				}
				for _, b := range bs {
					head := substitute(r.Head, b.env)
					tier := max(b.tier, r.Tier)
					k := head.String()
					nf := db[k]
					if nf == nil {
						nf = &naiveFact{atom: head}
						db[k] = nf
					}
					if nf.derTier == 0 || tier < nf.derTier {
						nf.derTier = tier
						changed = true
					}
				}
			}
		}
	}
	var out []string
	for _, nf := range db {
		t := strongest(nf.baseTier, nf.derTier)
		if t == 0 {
			continue
		}
		s := nf.atom.String() + " " + t.String()
		if nf.baseTier != 0 {
			s += " base"
		}
		if nf.derTier != 0 {
			s += " derived:" + nf.derTier.String()
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

func isAggRule(r engine.Rule) bool {
	for _, a := range r.Head.Args {
		if a.Term.Agg != "" {
			return true
		}
	}
	return false
}

type naiveBinding struct {
	env  map[string]engine.Value
	tier contract.Tier
}

// naiveBindings enumerates every way the body holds: the cartesian product of the facts
// for the positive literals, then, as the engine documents, guards whenever their inputs
// are bound, NAF literals whenever their variables are, and producers last, one at a time.
func naiveBindings(db map[string]*naiveFact, body []engine.Literal) ([]naiveBinding, error) {
	var facts []*naiveFact
	for _, nf := range db {
		if strongest(nf.baseTier, nf.derTier) != 0 {
			facts = append(facts, nf)
		}
	}
	sort.Slice(facts, func(i, j int) bool { return facts[i].atom.String() < facts[j].atom.String() })
	var positives, builtins, nafs []engine.Literal
	for _, l := range body {
		switch {
		case isNaiveBuiltin(l.Atom.Pred):
			builtins = append(builtins, l)
		case l.NAF:
			nafs = append(nafs, l)
		default:
			positives = append(positives, l)
		}
	}
	var out []naiveBinding
	var failed error
	var walk func(i int, env map[string]engine.Value, tier contract.Tier)
	walk = func(i int, env map[string]engine.Value, tier contract.Tier) {
		if failed != nil {
			return
		}
		if i < len(positives) {
			for _, f := range facts {
				if next, ok := naiveMatch(positives[i].Atom, f.atom, env); ok {
					walk(i+1, next, max(tier, strongest(f.baseTier, f.derTier)))
				}
			}
			return
		}
		env = maps(env)
		pendB, pendN := slices.Clone(builtins), slices.Clone(nafs)
		for len(pendB)+len(pendN) > 0 {
			k := slices.IndexFunc(pendB, func(l engine.Literal) bool { return !isProducer(l) && naiveRunnable(l, env) })
			if k >= 0 {
				if ok, _, _ := naiveBuiltin(pendB[k], env); !ok {
					return
				}
				pendB = slices.Delete(pendB, k, k+1)
				continue
			}
			k = slices.IndexFunc(pendN, func(l engine.Literal) bool { return naiveRunnable(l, env) })
			if k >= 0 {
				for _, f := range facts {
					if _, ok := naiveMatch(pendN[k].Atom, f.atom, env); ok {
						return
					}
				}
				pendN = slices.Delete(pendN, k, k+1)
				continue
			}
			k = slices.IndexFunc(pendB, func(l engine.Literal) bool { return naiveRunnable(l, env) })
			if k < 0 {
				panic("naive: unsafe rule")
			}
			ok, _, err := naiveBuiltin(pendB[k], env)
			if err != nil {
				failed = err
				return
			}
			if !ok {
				return
			}
			pendB = slices.Delete(pendB, k, k+1)
		}
		out = append(out, naiveBinding{env: env, tier: tier})
	}
	walk(0, map[string]engine.Value{}, contract.TierVerified)
	return out, failed
}

func isProducer(l engine.Literal) bool {
	_, ok := l.Atom.Get("result")
	return ok
}

// naiveRunnable reports whether every input of l (every argument, for a guard or NAF
// literal; all but result for a producer) is bound.
func naiveRunnable(l engine.Literal, env map[string]engine.Value) bool {
	for _, arg := range l.Atom.Args {
		if arg.Name == "result" && isNaiveBuiltin(l.Atom.Pred) || !arg.Term.IsVar() {
			continue
		}
		if _, ok := env[arg.Term.Var]; !ok {
			return false
		}
	}
	return true
}

func maps(m map[string]engine.Value) map[string]engine.Value {
	out := make(map[string]engine.Value, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// naiveMatch matches pattern p against ground atom a.
func naiveMatch(p, a engine.Atom, env map[string]engine.Value) (map[string]engine.Value, bool) {
	if p.Pred != a.Pred || p.Neg != a.Neg {
		return nil, false
	}
	next := env
	copied := false
	for _, arg := range p.Args {
		t, ok := a.Get(arg.Name)
		if !ok {
			return nil, false
		}
		v := t.Val
		if !arg.Term.IsVar() {
			if arg.Term.Val != v {
				return nil, false
			}
			continue
		}
		if old, ok := next[arg.Term.Var]; ok {
			if old != v {
				return nil, false
			}
			continue
		}
		if !copied {
			next = maps(env)
			copied = true
		}
		next[arg.Term.Var] = v
	}
	return next, true
}

func naiveArg(a engine.Atom, name string, env map[string]engine.Value) (engine.Value, bool, string) {
	t, _ := a.Get(name)
	if !t.IsVar() {
		return t.Val, true, ""
	}
	v, ok := env[t.Var]
	return v, ok, t.Var
}

// naiveBuiltin runs a built-in when its inputs are bound: ran reports whether it could.
func naiveBuiltin(l engine.Literal, env map[string]engine.Value) (ok, ran bool, err error) {
	left, lok, _ := naiveArg(l.Atom, "left", env)
	right, rok, _ := naiveArg(l.Atom, "right", env)
	if !lok || !rok {
		return false, false, nil
	}
	switch l.Atom.Pred {
	case "eq":
		return (left == right) != l.NAF, true, nil
	case "neq":
		return (left != right) != l.NAF, true, nil
	case "lt", "lte", "gt", "gte":
		if left.Kind() != engine.KindInt || right.Kind() != engine.KindInt {
			return l.NAF, true, nil
		}
		a, b := left.IntVal(), right.IntVal()
		r := map[string]bool{"lt": a < b, "lte": a <= b, "gt": a > b, "gte": a >= b}[l.Atom.Pred]
		return r != l.NAF, true, nil
	}
	a, b := left.IntVal(), right.IntVal()
	var n int64
	switch l.Atom.Pred {
	case "add":
		n = a + b
	case "sub":
		n = a - b
	case "mul":
		n = a * b
	case "div":
		if b == 0 || a%b != 0 {
			return false, true, errNaiveArithmetic
		}
		n = a / b
	}
	v, err := engine.Int(n)
	if err != nil {
		panic(err)
	}
	out, bound, name := naiveArg(l.Atom, "result", env)
	if bound {
		return out == v, true, nil
	}
	env[name] = v
	return true, true, nil
}

func substitute(a engine.Atom, env map[string]engine.Value) engine.Atom {
	out := engine.Atom{Pred: a.Pred, Neg: a.Neg}
	for _, arg := range a.Args {
		t := arg.Term
		if t.IsVar() {
			t = engine.C(env[t.Var])
		}
		out.Args = append(out.Args, engine.Arg{Name: arg.Name, Term: t})
	}
	return out
}

// naiveAggregate adds the aggregate rule's groups to db (derived).
func naiveAggregate(db map[string]*naiveFact, r engine.Rule) error {
	type group struct {
		env      map[string]engine.Value
		bindings map[string]naiveBinding
	}
	groups := map[string]*group{}
	var order []string
	bs, err := naiveBindings(db, r.Body)
	if err != nil {
		return err
	}
	for _, b := range bs {
		var gk, bk []string
		for _, arg := range r.Head.Args {
			if arg.Term.IsVar() && arg.Term.Agg == "" {
				gk = append(gk, b.env[arg.Term.Var].String())
			}
		}
		var names []string
		for n := range b.env {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			bk = append(bk, n+"="+b.env[n].String())
		}
		g := groups[strings.Join(gk, ",")]
		if g == nil {
			g = &group{env: b.env, bindings: map[string]naiveBinding{}}
			groups[strings.Join(gk, ",")] = g
			order = append(order, strings.Join(gk, ","))
		}
		key := strings.Join(bk, ",")
		if old, ok := g.bindings[key]; !ok || b.tier < old.tier {
			g.bindings[key] = b
		}
	}
	for _, k := range order {
		g := groups[k]
		tier := r.Tier
		for _, b := range g.bindings {
			tier = max(tier, b.tier)
		}
		head := engine.Atom{Pred: r.Head.Pred, Neg: r.Head.Neg}
		for _, arg := range r.Head.Args {
			t := arg.Term
			switch {
			case t.Agg == "count":
				v, _ := engine.Int(int64(len(g.bindings)))
				t = engine.C(v)
			case t.Agg == "sum":
				var s int64
				for _, b := range g.bindings {
					s += b.env[t.Var].IntVal()
				}
				v, _ := engine.Int(s)
				t = engine.C(v)
			case t.IsVar():
				t = engine.C(g.env[t.Var])
			}
			head.Args = append(head.Args, engine.Arg{Name: arg.Name, Term: t})
		}
		key := head.String()
		nf := db[key]
		if nf == nil {
			nf = &naiveFact{atom: head}
			db[key] = nf
		}
		if nf.derTier == 0 || tier < nf.derTier {
			nf.derTier = tier
		}
	}
	return nil
}
