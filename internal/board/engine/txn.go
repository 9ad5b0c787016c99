package engine

import (
	"iter"
	"slices"

	"github.com/docketrun/docket/internal/contract"
)

// txn is one all-or-nothing mutation. Every fact it changes is saved on first touch, so
// that an error restores the engine exactly (rollback) and success reports exactly what
// changed (commit).
type txn struct {
	e       *Engine
	stamp   uint64
	oldProg *program
	saved   []savedFact
	ids     []savedID // base-id map entries changed, in order

	// rel lists the saved and created facts of each relation, for the net change of a
	// stratum. The facts a mutation created (whose state before was "absent", so nothing
	// is saved for them) are listed there only: one list of them per relation, not a
	// second of them all.
	rel map[*relation]*relLog
	// logs are rel's values in the order their relations were first touched.
	logs []*relLog
	// lastRel and lastLog cache the last lookup in rel.
	lastRel *relation
	lastLog *relLog
	// worse and better are the facts whose tier got weaker (or that stopped holding) and
	// stronger (or that started holding), per relation, once the relation is final.
	worse, better map[*relation][]*fact
	// added and removed are the facts that started and stopped holding, per relation.
	added, removed map[*relation][]*fact
	// pendingOD lists, per head relation, facts whose derivations used a removed rule.
	pendingOD map[*relation][]*fact
	// newRules are rules added by this mutation, evaluated in full in their stratum.
	newRules map[*crule]bool
}

type relLog struct {
	saved   []int // indexes into txn.saved
	created []fref
}

func (t *txn) log(rel *relation) *relLog {
	// A fixpoint creates facts of one relation in long runs: remember the last log rather
	// than look it up for each.
	if rel == t.lastRel {
		return t.lastLog
	}
	l := t.rel[rel]
	if l == nil {
		l = &relLog{}
		t.rel[rel] = l
		t.logs = append(t.logs, l)
	}
	t.lastRel, t.lastLog = rel, l
	return l
}

type savedFact struct {
	f        *fact
	bases    []baseRef
	baseTier contract.Tier
	derTier  contract.Tier
	der      derivation
	inl      uint8
}

type savedID struct {
	id  string
	old *fact // nil when the id was not in use
}

func (e *Engine) begin() *txn {
	e.stamp++
	// The maps a mutation may not need are made when first written (settle, addRules,
	// dropRule): the Board asserts a fact at a time, mostly of relations no stratum
	// reads, and made seven maps a fact.
	return &txn{e: e, stamp: e.stamp, oldProg: e.prog, rel: make(map[*relation]*relLog)}
}

// touch saves f's state before its first change in this mutation.
func (t *txn) touch(f *fact) {
	if f.stamp == t.stamp {
		return
	}
	f.stamp = t.stamp
	f.was = f.tier()
	l := t.log(t.e.tabOf(f).rel)
	l.saved = append(l.saved, len(t.saved))
	t.saved = append(t.saved, savedFact{f: f, bases: f.bases, baseTier: f.baseTier, derTier: f.derTier, der: f.der, inl: f.inl})
}

// factFor returns the stored fact for vals in tab, creating (and touching) it when absent.
func (t *txn) factFor(tab *table, vals []uint32) (*fact, error) {
	f, slot := tab.find(vals)
	if f != nil {
		return f, nil
	}
	return t.create(tab, vals, slot)
}

// create stores a new fact for vals, which tab does not hold, at the slot tab.find
// returned for them.
func (t *txn) create(tab *table, vals []uint32, slot int) (*fact, error) {
	e := t.e
	if e.stored >= e.limits.MaxFacts {
		return nil, errorf(contract.CodeResourceLimit,
			"the Board would hold more than %d facts (deriving %s); narrow the rules that derive it, or raise Limits.MaxFacts",
			e.limits.MaxFacts, tab.rel.key)
	}
	f := e.facts.alloc()
	f.tab = tab.id
	if len(vals) <= len(f.inline) {
		f.nvals = uint8(copy(f.inline[:], vals))
	} else {
		f.vals = slices.Clone(vals)
	}
	tab.insertAt(f, slot)
	e.stored++
	f.stamp, f.was = t.stamp, 0
	l := t.log(tab.rel)
	l.created = appendRef(l.created, f.ref)
	return f, nil
}

func (t *txn) setID(id string, f *fact) {
	t.ids = append(t.ids, savedID{id: id, old: t.e.baseIDs[id]})
	if f == nil {
		delete(t.e.baseIDs, id)
	} else {
		t.e.baseIDs[id] = f
	}
}

// rollback restores every saved fact and the program, and drops facts the mutation created.
func (t *txn) rollback() {
	e := t.e
	for i := len(t.ids) - 1; i >= 0; i-- {
		s := t.ids[i]
		if s.old == nil {
			delete(e.baseIDs, s.id)
		} else {
			e.baseIDs[s.id] = s.old
		}
	}
	for _, s := range t.saved {
		s.f.bases, s.f.baseTier, s.f.derTier, s.f.der, s.f.inl = s.bases, s.baseTier, s.derTier, s.der, s.inl
	}
	for f := range t.created() {
		f.bases, f.baseTier, f.derTier, f.der, f.inl = nil, 0, 0, derivation{}, 0
	}
	e.prog = t.oldProg
	t.sweep()
}

// sweep removes from storage the saved facts that no longer hold.
func (t *txn) sweep() {
	for _, s := range t.saved {
		t.drop(s.f)
	}
	for f := range t.created() {
		t.drop(f)
	}
}

// drop removes f from storage when it no longer holds.
func (t *txn) drop(f *fact) {
	if f.tier() != 0 || f.pos < 0 {
		return
	}
	e := t.e
	e.tabOf(f).remove(f)
	e.stored--
	if f.id != "" && e.derivedIDs[f.id] == f {
		delete(e.derivedIDs, f.id)
	}
	// Nothing refers to f once the mutation ends (a fact that holds has no premise that
	// does not), so its slot can serve a later one.
	e.facts.release(f)
}

// commit reports what changed and removes what no longer holds.
func (t *txn) commit() Delta {
	e := t.e
	var d Delta
	if e.noDeltas {
		t.sweep()
		t.registerPending()
		return d
	}
	n, args := 0, 0
	for f := range t.created() {
		if f.tier() != 0 {
			n++
			args += len(f.values())
		}
	}
	// A large batch of new facts gets its ids and argument lists from two shared blocks:
	// one allocation each instead of two per fact. The argument block is sized to what
	// the facts take, up to 4,096: the Delta's entries keep it, and one fact's Delta
	// kept a block of 4,096 (≈ 300 KB).
	d.Added = make([]Entry, 0, n)
	for _, l := range t.logs {
		e.assignIDs(l.created)
	}
	var slab []Arg
	for f := range t.created() {
		if f.tier() == 0 {
			continue
		}
		n := len(f.values())
		if len(slab) < n {
			slab = make([]Arg, max(min(4096, args), n))
		}
		en := e.entryInto(f, slab[:n:n])
		slab = slab[n:]
		d.Added = append(d.Added, en)
	}
	for _, s := range t.saved {
		f := s.f
		before, after := tierOf(s.baseTier, s.derTier), f.tier()
		switch {
		case before == 0 && after != 0:
			d.Added = append(d.Added, e.entryOf(f))
		case before != 0 && after == 0:
			en := Entry{Atom: e.atomOf(f), Tier: before, Base: len(s.bases) > 0, Derived: s.derTier != 0, DerivedTier: s.derTier}
			if en.Base {
				en.ID = s.bases[0].id
			} else {
				en.ID = e.derivedID(f)
			}
			d.Removed = append(d.Removed, en)
		case before != after:
			d.Retier = append(d.Retier, e.entryOf(f))
		}
	}
	t.sweep()
	t.registerPending()
	return d
}

// registerPending lists the new facts, whose ids still need registering for
// Lookup (see [Engine.find]). Listing them here, in one append, rather than as they are
// made, spares a third growing list in the fixpoint's inner loop.
func (t *txn) registerPending() {
	e := t.e
	// Those that did not survive are skipped where the list is read: filtering them here
	// would visit every new fact once more.
	n := 0
	for _, l := range t.logs {
		n += len(l.created)
	}
	e.pending = slices.Grow(e.pending, n)
	for _, l := range t.logs {
		e.pending = append(e.pending, l.created...)
	}
}

// created yields the facts this mutation created, relation by relation.
func (t *txn) created() iter.Seq[*fact] {
	return func(yield func(*fact) bool) {
		for _, l := range t.logs {
			for _, r := range l.created {
				if !yield(t.e.fact(r)) {
					return
				}
			}
		}
	}
}

// settle records the net change of every saved fact of rel, once rel is final in this
// mutation, for the strata that read it.
func (t *txn) settle(rel *relation) {
	l := t.rel[rel]
	if l == nil || !t.e.prog.readBelow[rel] {
		// No later stratum reads rel: its net change has no reader. (The stratum that
		// derives rel is done with it.)
		return
	}
	if t.worse == nil {
		t.worse, t.better = make(map[*relation][]*fact), make(map[*relation][]*fact)
		t.added, t.removed = make(map[*relation][]*fact), make(map[*relation][]*fact)
	}
	// Size both lists once: a large fixpoint creates hundreds of thousands of facts, and
	// growing by doubling would allocate twice that.
	n := 0
	for _, r := range l.created {
		if t.e.fact(r).tier() != 0 {
			n++
		}
	}
	better, added := slices.Grow(t.better[rel], n), slices.Grow(t.added[rel], n)
	for _, r := range l.created {
		if f := t.e.fact(r); f.tier() != 0 {
			better = append(better, f)
			added = append(added, f)
		}
	}
	t.better[rel], t.added[rel] = better, added
	for _, i := range l.saved {
		s := t.saved[i]
		before, after := tierOf(s.baseTier, s.derTier), s.f.tier()
		switch {
		case before == after:
			continue
		case after == 0 || (before != 0 && after > before):
			t.worse[rel] = append(t.worse[rel], s.f)
		default:
			t.better[rel] = append(t.better[rel], s.f)
		}
		if before == 0 {
			t.added[rel] = append(t.added[rel], s.f)
		} else if after == 0 {
			t.removed[rel] = append(t.removed[rel], s.f)
		}
	}
}
