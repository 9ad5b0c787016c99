package engine

import (
	"cmp"
	"iter"
	"math/bits"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Lookup returns the fact with the given base id or derived id.
func (e *Engine) Lookup(id string) (Entry, bool) {
	f := e.find(id)
	if f == nil {
		return Entry{}, false
	}
	return e.entryOf(f), true
}

func (e *Engine) find(id string) *fact {
	if f := e.baseIDs[id]; f != nil {
		return f
	}
	if !strings.HasPrefix(id, "d_") {
		return nil
	}
	// A fact's slot is reused once it is dropped, so an entry is checked against the id.
	if f := e.derivedIDs[id]; f != nil && f.pos >= 0 && f.id == id {
		return f
	}
	// Derived ids are computed on demand: hashing every derived fact as it is made would
	// cost more than the derivation itself.
	for _, r := range e.pending {
		if f := e.fact(r); f.pos >= 0 {
			e.derivedIDs[e.derivedID(f)] = f
		}
	}
	e.pending = nil
	if f := e.derivedIDs[id]; f != nil && f.pos >= 0 && f.id == id {
		return f
	}
	return nil
}

// Holds returns the fact with exactly the ground atom a (same predicate, negation and
// argument names), if it holds.
func (e *Engine) Holds(a Atom) (Entry, bool) {
	a, err := checkAtom(a)
	if err != nil || !a.Ground() {
		return Entry{}, false
	}
	rel := e.relation(relKey{a.Pred, a.Neg}, false)
	if rel == nil {
		return Entry{}, false
	}
	names := argNames(a)
	for _, t := range rel.tables {
		if !equalStrings(t.names, names) {
			continue
		}
		vals := make([]uint32, len(a.Args))
		for i, arg := range a.Args {
			id, ok := e.syms.lookup(arg.Term.Val)
			if !ok {
				return Entry{}, false
			}
			vals[i] = id
		}
		if f := t.get(vals); f != nil && f.tier() != 0 {
			return e.entryOf(f), true
		}
	}
	return Entry{}, false
}

// Match yields every fact the pattern matches (same predicate and negation,
// every named argument present with an equal value or a consistently bound variable; extra
// arguments ignored) with the pattern's variable bindings. A malformed pattern matches
// nothing. The matches are collected before the first is yielded, so the caller may mutate
// the engine while ranging.
func (e *Engine) Match(pattern Atom) iter.Seq2[Entry, Bindings] {
	type match struct {
		en Entry
		b  Bindings
	}
	var ms []match
	r, err := e.compileQuery([]Literal{{Atom: pattern}}, e.limits)
	if err == nil && r.body[0].kind == litPos {
		j := e.newJoiner(r, modeAlive, nil)
		j.emit = func(contract.Tier) error {
			ms = append(ms, match{en: e.entryOf(j.prem[0]), b: e.bindings(r, j.env)})
			return nil
		}
		_ = j.all() // positive literals alone cannot fail
	}
	return func(yield func(Entry, Bindings) bool) {
		for _, m := range ms {
			if !yield(m.en, m.b) {
				return
			}
		}
	}
}

func (e *Engine) bindings(r *crule, env []uint32) Bindings {
	b := make(Bindings, len(r.varNames))
	for s, name := range r.varNames {
		if env[s] != 0 {
			b[name] = e.syms.vals[env[s]]
		}
	}
	return b
}

// Query answers a conjunctive query: positive literals, NAF literals and built-ins, under
// the same range restriction as a rule body. Each row carries the bindings of the query's
// variables, the ids of the facts the positive literals matched (in body order) and the
// weakest of their tiers (verified when there are none). Rows come in a deterministic
// order; two rows may bind alike when different facts match. Errors: invalid_argument,
// rule_unsafe, unknown_builtin, arithmetic, resource_limit (more rows than Limits.MaxFacts).
func (e *Engine) Query(lits []Literal) ([]Row, error) {
	r, err := e.compileQuery(lits, e.limits)
	if err != nil {
		return nil, err
	}
	var rows []Row
	j := e.newJoiner(r, modeAlive, nil)
	j.emit = func(tier contract.Tier) error {
		if len(rows) >= e.limits.MaxFacts {
			return errorf(contract.CodeResourceLimit,
				"the query has more than %d answers; bind more of its arguments", e.limits.MaxFacts)
		}
		row := Row{Bindings: e.bindings(r, j.env), Tier: tier}
		for _, p := range j.prem {
			if p != nil {
				row.Premises = append(row.Premises, e.premiseID(p))
			}
		}
		rows = append(rows, row)
		return nil
	}
	if err := j.all(); err != nil {
		return nil, err
	}
	return rows, nil
}

// Explain returns the best derivation of the fact with the given id: its base support, or
// the rule and the premises of its best derivation, recursively. A fact reached twice in
// the tree is the same *Derivation. Errors: node_not_found.
func (e *Engine) Explain(id string) (*Derivation, error) {
	f := e.find(id)
	if f == nil {
		return nil, errorf(contract.CodeNodeNotFound, "no fact has the id %s; check the id against the Board", id)
	}
	return e.explain(f, make(map[*fact]*Derivation), make(map[*fact]bool)), nil
}

func (e *Engine) explain(f *fact, memo map[*fact]*Derivation, open map[*fact]bool) *Derivation {
	if d, ok := memo[f]; ok {
		return d
	}
	d := &Derivation{ID: e.premiseID(f), Atom: e.atomOf(f), Tier: f.tier()}
	if f.baseTier != 0 && (f.derTier == 0 || f.baseTier <= f.derTier) || f.der.rule == 0 || open[f] {
		d.Base = f.baseTier != 0
		return d
	}
	open[f] = true
	d.Rule = e.ruleIDs[f.der.rule]
	for _, p := range f.premises() {
		d.Premises = append(d.Premises, e.explain(e.fact(p), memo, open))
	}
	delete(open, f)
	memo[f] = d
	return d
}

// Facts yields every fact that holds, ordered by predicate, negation and canonical text.
func (e *Engine) Facts() iter.Seq[Entry] {
	type keyed struct {
		text string
		f    *fact
		gen  uint32
	}
	var fs []keyed
	for _, rel := range e.rels {
		for _, t := range rel.tables {
			for _, r := range t.list {
				if f := e.fact(r); f.tier() != 0 {
					fs = append(fs, keyed{string(e.canonical(nil, f)), f, f.gen})
				}
			}
		}
	}
	slices.SortFunc(fs, func(a, b keyed) int {
		ka, kb := e.tabOf(a.f).rel.key, e.tabOf(b.f).rel.key
		return cmp.Or(strings.Compare(ka.pred, kb.pred), cmpBool(ka.neg, kb.neg), strings.Compare(a.text, b.text))
	})
	return func(yield func(Entry) bool) {
		for _, k := range fs {
			if k.f.pos < 0 || k.f.gen != k.gen {
				continue // removed by a mutation made while ranging
			}
			if !yield(e.entryOf(k.f)) {
				return
			}
		}
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Rules returns the rules in the order they were added.
func (e *Engine) Rules() []Rule {
	out := make([]Rule, len(e.prog.rules))
	for i, r := range e.prog.rules {
		out[i] = r.src
	}
	return out
}

// Reads reports whether a rule's body reads the facts of pred (of ~pred when neg):
// positively, under not, or aggregated. Asserting a fact of a relation no rule reads
// derives nothing and changes no other fact, so several such facts asserted in one
// mutation leave the engine as asserting them one a mutation does.
func (e *Engine) Reads(pred string, neg bool) bool {
	r := e.rels[relKey{pred, neg}]
	return r != nil && e.prog.read[r]
}

// Len returns the number of facts that hold, base and derived.
func (e *Engine) Len() int { return e.stored }

// Relation names one relation that holds facts, with how many, for [Engine.Relations].
type Relation struct {
	Pred  string
	Neg   bool
	Facts int
}

// Relations returns the relations that hold facts, ordered by predicate, p before ~p.
func (e *Engine) Relations() []Relation {
	var out []Relation
	for k, rel := range e.rels {
		n := 0
		for _, t := range rel.tables {
			n += len(t.list) // between mutations, a table holds only facts that hold
		}
		if n > 0 {
			out = append(out, Relation{Pred: k.pred, Neg: k.neg, Facts: n})
		}
	}
	slices.SortFunc(out, func(a, b Relation) int { return cmp.Or(strings.Compare(a.Pred, b.Pred), cmpBool(a.Neg, b.Neg)) })
	return out
}

// Stream calls fn for every fact that holds of the relations keep accepts (every relation
// when keep is nil), relation by relation as [Engine.Relations] orders them; within a
// relation, facts come ordered by their argument names, then by their values column by
// column (strings before integers before floats before booleans; each in its natural
// order). It is for writing a large Board out: it builds no text and no derived id, so
// the Entry's ID is empty, and its Args are reused from one call to the next (copy what
// you keep). An error from fn stops the walk and is returned. fn must not mutate e.
func (e *Engine) Stream(keep func(pred string, neg bool) bool, fn func(Entry) error) error {
	rank, byRank := e.valueRanks()
	width := bits.Len(uint(len(rank)))
	for _, r := range e.Relations() {
		if keep != nil && !keep(r.Pred, r.Neg) {
			continue
		}
		tabs := slices.Clone(e.rels[relKey{r.Pred, r.Neg}].tables)
		slices.SortFunc(tabs, func(a, b *table) int { return slices.Compare(a.names, b.names) })
		for _, t := range tabs {
			args := make([]Arg, len(t.names))
			for i, name := range t.names {
				args[i].Name = name
			}
			en := Entry{Atom: Atom{Pred: r.Pred, Neg: r.Neg, Args: args}}
			packed := width*len(t.names) <= 64
			// The facts are read once, in storage order, into records that carry all that
			// is written out: reading them again in sorted order, scattered over memory,
			// cost a cache miss each.
			for _, k := range sortedFacts(t, rank, width) {
				en.Tier, en.Base, en.Derived, en.DerivedTier = tierOf(k.baseTier, k.derTier), k.base, k.derTier != 0, k.derTier
				for i := range args {
					var id uint32
					if packed {
						id = byRank[k.key>>(width*(len(args)-1-i))&(1<<width-1)]
					} else {
						id = k.f.values()[i]
					}
					args[i].Term.Val = e.syms.vals[id]
				}
				if err := fn(en); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// valueRanks numbers the interned values in the order Stream sorts them: rank maps an id
// to its rank, byRank a rank to its id.
func (e *Engine) valueRanks() (rank, byRank []uint32) {
	byRank = make([]uint32, len(e.syms.vals))
	for i := range byRank {
		byRank[i] = uint32(i)
	}
	// Id 0 (unbound) stays first, so that every rank is an id's and 0 decodes to 0.
	slices.SortFunc(byRank[1:], func(a, b uint32) int { return compareValues(e.syms.vals[a], e.syms.vals[b]) })
	rank = make([]uint32, len(e.syms.vals))
	for r, id := range byRank {
		rank[id] = uint32(r)
	}
	return rank, byRank
}

// compareValues orders values by kind, then naturally within a kind.
func compareValues(a, b Value) int {
	if a.kind != b.kind {
		return cmp.Compare(a.kind, b.kind)
	}
	switch a.kind {
	case KindString:
		return strings.Compare(a.s, b.s)
	case KindFloat:
		return cmp.Compare(a.FloatVal(), b.FloatVal())
	}
	return cmp.Compare(a.n, b.n) // integers, and booleans as 0 and 1
}

// sortedFacts returns the facts of t that hold, ordered by the ranks of their values,
// each w bits wide.
func sortedFacts(t *table, rank []uint32, w int) []keyedFact {
	ks := make([]keyedFact, 0, len(t.list))
	for _, r := range t.list {
		f := t.facts.at(r)
		if f.tier() == 0 {
			continue
		}
		var k uint64
		if w*len(t.names) <= 64 {
			for _, v := range f.values() {
				k = k<<w | uint64(rank[v])
			}
		}
		ks = append(ks, keyedFact{key: k, f: f, baseTier: f.baseTier, derTier: f.derTier, base: len(f.bases) > 0})
	}
	if w*len(t.names) > 64 {
		slices.SortFunc(ks, func(a, b keyedFact) int {
			av, bv := a.f.values(), b.f.values()
			for i := range av {
				if c := cmp.Compare(rank[av[i]], rank[bv[i]]); c != 0 {
					return c
				}
			}
			return 0
		})
		return ks
	}
	// The packed ranks of a fact's values are a key that orders it: sort by radix, in
	// linear time.
	return radixSort(ks, w*len(t.names))
}

// keyedFact is a fact with what Stream writes of it.
type keyedFact struct {
	key               uint64 // the ranks of the values, packed
	f                 *fact
	baseTier, derTier contract.Tier
	base              bool
}

// radixSort sorts ks by the low keyBits bits of their keys, least significant digit first.
func radixSort(ks []keyedFact, keyBits int) []keyedFact {
	const digit = 11
	tmp := make([]keyedFact, len(ks))
	var count [1 << digit]int
	for shift := 0; shift < keyBits; shift += digit {
		clear(count[:])
		for _, k := range ks {
			count[k.key>>shift&(1<<digit-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range ks {
			d := k.key >> shift & (1<<digit - 1)
			tmp[count[d]] = k
			count[d]++
		}
		ks, tmp = tmp, ks
	}
	return ks
}
