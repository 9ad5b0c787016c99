package engine

import (
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Evaluation is incremental, stratum by stratum, in dependency order. Each
// stratum receives the net changes of the relations below it and updates its own facts in
// three phases, a delete-and-rederive (DRed) scheme extended to tiers:
//
//  1. Over-delete. Every fact of the stratum that has a derivation through a premise that
//     stopped holding or got weaker, through a NAF literal whose atom started holding,
//     through a removed rule, an aggregate group that changed, or a base support that got
//     weaker, loses its derived support; the loss propagates within the stratum.
//  2. Rederive. Each over-deleted fact is derived again, in one step, from what still holds.
//  3. Insert. Semi-naive forward chaining from every fact that started holding or got
//     stronger, in max-min tiers: a derivation's tier is the weakest of its premises and its
//     rule; a fact takes its best derivation. Tiers only improve here, and there are seven,
//     so each fact re-enters the frontier a bounded number of times.
//
// NAF literals and built-ins add no premise and no tier: a derivation is as strong as the
// facts it matched and its rule. A fact both asserted and derived takes the stronger.
//
// A stratum that reads nothing that changed is skipped, so a mutation costs in proportion
// to what it affects, not to the size of the Board.

// run brings every stratum to its fixpoint after the base changes, rule additions and rule
// removals already recorded in t.
func (t *txn) run() error {
	p := t.e.prog
	// Relations no rule derives are final now: settle them, dropping derived support left
	// from removed rules.
	var baseRels []*relation
	for rel := range t.rel {
		if p.headOf[rel] == nil {
			baseRels = append(baseRels, rel)
		}
	}
	for rel := range t.pendingOD {
		if p.headOf[rel] == nil && t.rel[rel] == nil {
			baseRels = append(baseRels, rel)
		}
	}
	slices.SortFunc(baseRels, func(a, b *relation) int { return strings.Compare(a.key.String(), b.key.String()) })
	for _, rel := range baseRels {
		for _, f := range t.pendingOD[rel] {
			t.touch(f)
			f.derTier, f.der, f.inl = 0, derivation{}, 0
		}
		t.settle(rel)
	}
	for _, s := range p.strata {
		if !t.affects(s) {
			continue
		}
		if err := t.stratum(s); err != nil {
			return err
		}
		for _, h := range s.heads {
			t.settle(h)
		}
	}
	return nil
}

func (t *txn) affects(s *stratum) bool {
	for _, r := range s.rules {
		if t.newRules[r] {
			return true
		}
	}
	for _, h := range s.heads {
		if t.rel[h] != nil || len(t.pendingOD[h]) > 0 {
			return true
		}
	}
	for _, rel := range s.reads {
		if len(t.worse[rel]) > 0 || len(t.better[rel]) > 0 {
			return true
		}
	}
	return false
}

// pass holds the working sets of one stratum's evaluation.
type pass struct {
	t       *txn
	s       *stratum
	stamp   uint64
	od      []*fact // over-deleted facts, in order
	odQueue []*fact // facts whose loss must propagate as premises
	delta   []fref  // the insertion frontier
}

func (t *txn) stratum(s *stratum) error {
	e := t.e
	e.stamp++
	ps := &pass{t: t, s: s, stamp: e.stamp}

	// Seeds of over-deletion: base support that got weaker, removed rules, premises below
	// that got worse, NAF atoms that started holding, aggregate groups that changed.
	for _, h := range s.heads {
		l := t.rel[h]
		if l == nil {
			l = &relLog{}
		}
		for _, r := range l.created {
			if e.fact(r).tier() != 0 { // asserted by this mutation
				ps.delta = append(ps.delta, r)
			}
		}
		for _, i := range l.saved {
			sv := t.saved[i]
			f := sv.f
			if weakened(sv.baseTier, f.baseTier) {
				ps.overDelete(f)
			} else if f.tier() != 0 && (f.was == 0 || f.tier() < f.was) {
				ps.delta = append(ps.delta, f.ref)
			}
		}
		for _, f := range t.pendingOD[h] {
			ps.overDelete(f)
		}
	}
	for _, rel := range s.reads {
		ps.odQueue = append(ps.odQueue, t.worse[rel]...)
	}
	var aggSeeds []aggResult
	for _, r := range s.rules {
		if r.isAgg {
			res, err := ps.aggregateChanges(r)
			if err != nil {
				return err
			}
			aggSeeds = append(aggSeeds, res...)
			continue
		}
		for i, l := range r.body {
			if l.kind != litNAF {
				continue
			}
			for _, f := range t.added[l.rel] {
				if err := ps.overDeleteFrom(r, i, f); err != nil {
					return err
				}
			}
		}
	}
	if err := ps.propagateLoss(); err != nil {
		return err
	}

	// Rederive what was over-deleted, from what still holds.
	for _, f := range ps.od {
		if err := ps.rederive(f); err != nil {
			return err
		}
	}

	// Insertion seeds: premises below that got better, NAF atoms that stopped holding,
	// aggregate groups, and rules new in this mutation.
	for _, rel := range s.reads {
		for _, f := range t.better[rel] {
			ps.delta = append(ps.delta, f.ref)
		}
	}
	for _, a := range aggSeeds {
		if err := ps.improve(a.rule, a.vals, a.tier, a.prem); err != nil {
			return err
		}
	}
	for _, r := range s.rules {
		if r.isAgg {
			continue
		}
		if t.newRules[r] {
			if err := ps.insertAll(r); err != nil {
				return err
			}
		}
		for i, l := range r.body {
			if l.kind != litNAF {
				continue
			}
			for _, f := range t.removed[l.rel] {
				if err := ps.insertFrom(r, i, f); err != nil {
					return err
				}
			}
		}
	}
	return ps.fixpoint()
}

func weakened(before, after contract.Tier) bool {
	return before != 0 && (after == 0 || after > before)
}

// overDelete drops f's derived support; when f is weaker for it, its dependents are queued.
func (ps *pass) overDelete(f *fact) {
	if f.odStamp == ps.stamp {
		return
	}
	f.odStamp = ps.stamp
	ps.t.touch(f)
	f.derTier, f.der, f.inl = 0, derivation{}, 0
	ps.od = append(ps.od, f)
	// Dependents in this stratum were derived with the tier f had when the mutation began.
	if weakened(f.was, f.tier()) {
		ps.odQueue = append(ps.odQueue, f)
	}
}

// overDeleteFrom over-deletes the heads r derives (in any mode) with literal i matched to f.
func (ps *pass) overDeleteFrom(r *crule, i int, f *fact) error {
	j := ps.t.e.newJoiner(r, modeAny, nil)
	j.emit = func(contract.Tier) error {
		if g := r.headTab.get(j.headValsInto(r, ps.t.e.valBuf[:0])); g != nil && g.derTier != 0 {
			ps.overDelete(g)
		}
		return nil
	}
	return j.from(i, f)
}

// propagateLoss over-deletes, within the stratum, everything derived through a premise in
// the loss queue.
func (ps *pass) propagateLoss() error {
	for len(ps.odQueue) > 0 {
		f := ps.odQueue[0]
		ps.odQueue = ps.odQueue[1:]
		rel := ps.t.e.tabOf(f).rel
		for _, r := range ps.s.rules {
			if r.isAgg {
				continue
			}
			for i, l := range r.body {
				if l.kind == litPos && l.rel == rel {
					if err := ps.overDeleteFrom(r, i, f); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// rederive gives f back its best one-step derivation from what holds, if it has one.
func (ps *pass) rederive(f *fact) error {
	for _, r := range ps.s.rules {
		if r.headTab.id != f.tab {
			continue
		}
		env, ok := r.unifyHead(f.values())
		if !ok {
			continue
		}
		if r.isAgg {
			res, err := ps.t.e.aggregate(r, env)
			if err != nil {
				return err
			}
			for _, a := range res {
				if slices.Equal(a.vals, f.values()) {
					if err := ps.improve(r, a.vals, a.tier, a.prem); err != nil {
						return err
					}
				}
			}
			continue
		}
		j := ps.t.e.newJoiner(r, modeAlive, nil)
		j.emit = func(tier contract.Tier) error {
			return ps.improve(r, f.values(), contract.Weaker(tier, r.src.Tier), j.prem)
		}
		if err := j.withBound(env); err != nil {
			return err
		}
	}
	return nil
}

// unifyHead binds the head's variables from vals (non-aggregate positions only), or
// reports that the head cannot produce vals.
func (r *crule) unifyHead(vals []uint32) ([]uint32, bool) {
	env := make([]uint32, len(r.varNames))
	for k, t := range r.head {
		if r.aggs[k] != "" {
			continue
		}
		v := vals[k]
		switch {
		case t.slot < 0:
			if t.val != v {
				return nil, false
			}
		case env[t.slot] != 0:
			if env[t.slot] != v {
				return nil, false
			}
		default:
			env[t.slot] = v
		}
	}
	return env, true
}

// improve records a derivation of the head vals by r at tier when it beats the fact's
// current best; a fact that holds more strongly joins the frontier.
func (ps *pass) improve(r *crule, vals []uint32, tier contract.Tier, prem []*fact) error {
	f, slot := r.headTab.find(vals)
	if f != nil && f.derTier != 0 && f.derTier <= tier {
		return nil
	}
	if f == nil {
		var err error
		if f, err = ps.t.create(r.headTab, vals, slot); err != nil {
			return err
		}
	}
	ps.t.touch(f)
	before := f.tier()
	f.derTier = tier
	f.der, f.inl = f.derivation(r, prem, &ps.t.e.prems)
	if before == 0 || f.tier() < before {
		ps.delta = append(ps.delta, f.ref)
	}
	return nil
}

// derivation returns r's derivation of f from the non-nil premises, in body order, and
// the fact's inl for it. A fact created by this mutation keeps them in its inline space
// when they fit and the space is free: no saved state of an older mutation can refer to
// it. Otherwise they are carved from slab.
func (f *fact) derivation(r *crule, prem []*fact, slab *premSlab) (derivation, uint8) {
	n := 0
	for _, p := range prem {
		if p != nil {
			n++
		}
	}
	if n == 0 {
		return derivation{rule: r.ref}, 0
	}
	if f.was != 0 || n > len(f.inlinePrem) || f.inl != 0 {
		return derivation{rule: r.ref, prem: slab.compact(prem, n)}, 0
	}
	i := 0
	for _, p := range prem {
		if p != nil {
			f.inlinePrem[i] = p.ref
			i++
		}
	}
	return derivation{rule: r.ref}, uint8(n)
}

// compactPrem copies the non-nil premises, in body order.
func compactPrem(prem []*fact) []*fact {
	n := 0
	for _, p := range prem {
		if p != nil {
			n++
		}
	}
	out := make([]*fact, 0, n)
	for _, p := range prem {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// insertAll evaluates a new rule over everything that holds.
func (ps *pass) insertAll(r *crule) error {
	j := ps.t.e.newJoiner(r, modeAlive, nil)
	j.emit = func(tier contract.Tier) error {
		return ps.improve(r, j.headValsInto(r, ps.t.e.valBuf[:0]), contract.Weaker(tier, r.src.Tier), j.prem)
	}
	return j.all()
}

// insertFrom evaluates r with literal i matched to f, in alive mode.
func (ps *pass) insertFrom(r *crule, i int, f *fact) error {
	j := ps.t.e.newJoiner(r, modeAlive, nil)
	j.emit = func(tier contract.Tier) error {
		return ps.improve(r, j.headValsInto(r, ps.t.e.valBuf[:0]), contract.Weaker(tier, r.src.Tier), j.prem)
	}
	return j.from(i, f)
}

// fixpoint runs semi-naive rounds until the frontier is empty.
func (ps *pass) fixpoint() error {
	e := ps.t.e
	// One joiner a rule, by the rule's place in the stratum: a map lookup per frontier fact
	// and rule was a measurable share of a large fixpoint.
	joiners := make([]*joiner, len(ps.s.rules))
	var spare []fref
	for round := 0; len(ps.delta) > 0; round++ {
		if round >= e.limits.MaxIterations {
			return errorf(contract.CodeResourceLimit,
				"rules %s did not reach a fixpoint within %d rounds; check them for unbounded recursion (e.g. a counter that grows), or raise Limits.MaxIterations",
				ruleIDs(ps.s.rules), e.limits.MaxIterations)
		}
		// The next frontier reuses the array of the one before: a long recursion runs
		// many rounds, and each would otherwise grow a new list from empty.
		frontier := ps.delta
		ps.delta, spare = spare[:0], frontier
		for _, fr := range frontier {
			f := e.fact(fr)
			rel := e.tabOf(f).rel
			for ri, r := range ps.s.rules {
				if r.isAgg {
					continue
				}
				for i, l := range r.body {
					if l.kind != litPos || l.rel != rel {
						continue
					}
					j := joiners[ri]
					if j == nil {
						j = e.newJoiner(r, modeAlive, nil)
						r := r
						jj := j
						j.emit = func(tier contract.Tier) error {
							return ps.improve(r, jj.headValsInto(r, e.valBuf[:0]), contract.Weaker(tier, r.src.Tier), jj.prem)
						}
						joiners[ri] = j
					}
					if err := j.from(i, f); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func ruleIDs(rs []*crule) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += ", "
		}
		s += r.src.ID
	}
	return s
}

// headValsInto writes the head's value ids (aggregate positions zero) into buf.
func (j *joiner) headValsInto(r *crule, buf []uint32) []uint32 {
	for k, t := range r.head {
		if r.aggs[k] == "" {
			buf = append(buf, j.value(t))
		} else {
			buf = append(buf, 0)
		}
	}
	return buf
}
