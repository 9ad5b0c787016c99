package engine

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/docketrun/docket/internal/contract"
)

// Aggregates. A head term such as sum(A) makes an aggregate rule, grouped
// by the head's other variables. Its body relations sit in lower strata, so it runs after
// they reach their fixpoint. It aggregates over the set of distinct bindings of all the
// body's variables: two facts with equal amounts but different ids both count, while two
// matches that bind every variable alike count once. count counts those bindings; sum adds
// the aggregated variable over them (integers exactly, refusing with arithmetic beyond
// ±(2^53−1); a float anywhere makes the sum a float); min and max pick the smallest or
// largest value (numbers by value, strings bytewise; mixing them is refused). A group with
// no bindings derives nothing.
//
// The aggregate fact's tier is the weakest over all its bindings (each binding counted at
// its best derivation) and the rule's tier; its premises are the facts of those bindings.

// aggResult is one group's aggregate head.
type aggResult struct {
	rule *crule
	vals []uint32
	tier contract.Tier
	prem []*fact
}

type aggBinding struct {
	tier contract.Tier
	prem []*fact
}

type aggGroup struct {
	env      []uint32
	bindings map[string]*aggBinding
	order    []string // binding keys in discovery order, for deterministic results
}

// aggregate evaluates r's groups whose group variables agree with the non-zero slots of env
// (all groups when env is all zero).
func (e *Engine) aggregate(r *crule, env []uint32) ([]aggResult, error) {
	groups := make(map[string]*aggGroup)
	var order []string
	j := e.newJoiner(r, modeAlive, nil)
	j.emit = func(tier contract.Tier) error {
		gk := string(groupKey(r, j.env))
		g := groups[gk]
		if g == nil {
			g = &aggGroup{env: slices.Clone(j.env), bindings: make(map[string]*aggBinding)}
			groups[gk] = g
			order = append(order, gk)
		}
		bk := string(encodeKey(nil, j.env))
		b := g.bindings[bk]
		if b == nil {
			b = &aggBinding{}
			g.bindings[bk] = b
			g.order = append(g.order, bk)
		}
		if b.tier == 0 || tier < b.tier {
			b.tier = tier
			b.prem = compactPrem(j.prem)
		}
		return nil
	}
	var err error
	if env == nil {
		err = j.all()
	} else {
		err = j.withBound(env)
	}
	if err != nil {
		return nil, err
	}
	out := make([]aggResult, 0, len(order))
	for _, gk := range order {
		res, err := e.finishGroup(r, groups[gk])
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// groupKey encodes the values of r's group variables.
func groupKey(r *crule, env []uint32) []byte {
	var buf []byte
	for _, k := range r.group {
		t := r.head[k]
		v := t.val
		if t.slot >= 0 {
			v = env[t.slot]
		}
		buf = binary.LittleEndian.AppendUint32(buf, v)
	}
	return buf
}

func (e *Engine) finishGroup(r *crule, g *aggGroup) (aggResult, error) {
	res := aggResult{rule: r, vals: make([]uint32, len(r.head)), tier: r.src.Tier}
	seen := make(map[*fact]bool)
	for _, bk := range g.order {
		b := g.bindings[bk]
		res.tier = contract.Weaker(res.tier, b.tier)
		for _, p := range b.prem {
			if !seen[p] {
				seen[p] = true
				res.prem = append(res.prem, p)
			}
		}
	}
	for k, t := range r.head {
		if r.aggs[k] == "" {
			if t.slot < 0 {
				res.vals[k] = t.val
			} else {
				res.vals[k] = g.env[t.slot]
			}
			continue
		}
		v, err := e.fold(r, r.aggs[k], t.slot, g)
		if err != nil {
			return aggResult{}, err
		}
		res.vals[k] = e.syms.intern(v)
	}
	return res, nil
}

// fold computes one aggregate function over a group's distinct bindings.
func (e *Engine) fold(r *crule, fn string, slot int, g *aggGroup) (Value, error) {
	if fn == "count" {
		return Value{kind: KindInt, n: int64(len(g.order))}, nil
	}
	var acc Value
	for i, bk := range g.order {
		v := e.syms.vals[binary.LittleEndian.Uint32([]byte(bk)[4*slot:])]
		if i == 0 {
			if fn == "sum" && !isNumber(v) {
				return Value{}, e.aggError(r, fn, v, errNotNumber)
			}
			acc = v
			continue
		}
		var err error
		switch fn {
		case "sum":
			acc, err = add(acc, v)
		case "min":
			acc, err = pick(acc, v, -1)
		case "max":
			acc, err = pick(acc, v, 1)
		}
		if err != nil {
			return Value{}, e.aggError(r, fn, v, err)
		}
	}
	return acc, nil
}

func (e *Engine) aggError(r *crule, fn string, v Value, cause error) error {
	return &contract.Error{Code: contract.CodeArithmetic, Err: cause, Teaching: fmt.Sprintf(
		"rule %s: %s over the value %s %s; exact arithmetic refuses rather than rounds: correct the facts, or aggregate a variable that holds numbers (or, for min and max, only strings)",
		r.src.ID, fn, v, cause)}
}

// aggregateChanges finds the groups of aggregate rule r that the changes below touched,
// over-deletes their current facts and returns their new results. A rule new in this
// mutation returns all its groups.
func (ps *pass) aggregateChanges(r *crule) ([]aggResult, error) {
	t, e := ps.t, ps.t.e
	if t.newRules[r] {
		return e.aggregate(r, nil)
	}
	groups := make(map[string][]uint32)
	var order []string
	// A group lost bindings through facts that got worse (for a NAF literal: that started
	// holding); those bindings held before, so a join over everything stored finds them. A
	// group gained bindings through facts that got better (for NAF: that stopped holding);
	// those bindings hold now, and a join over what holds finds them and refuses on an
	// arithmetic error, as the new state must.
	type source struct {
		facts []*fact
		mode  mode
	}
	for i, l := range r.body {
		var sources []source
		switch l.kind {
		case litPos:
			sources = []source{{t.worse[l.rel], modeAny}, {t.better[l.rel], modeAlive}}
		case litNAF:
			sources = []source{{t.added[l.rel], modeAny}, {t.removed[l.rel], modeAlive}}
		}
		for _, src := range sources {
			for _, f := range src.facts {
				j := e.newJoiner(r, src.mode, nil)
				j.emit = func(contract.Tier) error {
					gk := string(groupKey(r, j.env))
					if _, ok := groups[gk]; !ok {
						env := make([]uint32, len(j.env))
						for _, k := range r.group {
							if s := r.head[k].slot; s >= 0 {
								env[s] = j.env[s]
							}
						}
						groups[gk] = env
						order = append(order, gk)
					}
					return nil
				}
				if err := j.from(i, f); err != nil {
					return nil, err
				}
			}
		}
	}
	var out []aggResult
	for _, gk := range order {
		env := groups[gk]
		ps.overDeleteGroup(r, env)
		res, err := e.aggregate(r, env)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	return out, nil
}

// overDeleteGroup over-deletes every derived fact of r's head table that agrees with the
// group's values.
func (ps *pass) overDeleteGroup(r *crule, env []uint32) {
	var cols []int
	var vals []uint32
	var mask uint64
	for k, t := range r.head {
		if r.aggs[k] != "" {
			continue
		}
		v := t.val
		if t.slot >= 0 {
			v = env[t.slot]
		}
		cols = append(cols, k)
		vals = append(vals, v)
		mask |= 1 << k
	}
	cands := r.headTab.list
	if mask != 0 {
		cands = r.headTab.lookup(mask, cols, vals)
	}
	for _, fr := range slices.Clone(cands) {
		f := ps.t.e.fact(fr)
		if f.derTier == 0 {
			continue
		}
		match := true
		for i, c := range cols {
			if f.values()[c] != vals[i] {
				match = false
			}
		}
		if match {
			ps.overDelete(f)
		}
	}
}
