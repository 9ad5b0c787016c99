package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// maxArgs caps the arguments of one atom, so that a set of argument positions fits in a
// uint64 mask for the hash indexes.
const maxArgs = 64

// relKey names a relation: a predicate and its strong-negation flag. p and ~p are distinct
// relations: ~p is an explicit negative fact, not the absence of p.
type relKey struct {
	pred string
	neg  bool
}

func (k relKey) String() string {
	if k.neg {
		return "~" + k.pred
	}
	return k.pred
}

// symbols interns Values as small integers so that facts are slices of ids that compare,
// hash and index cheaply. Id 0 is reserved for "unbound". Integers and strings, nearly
// every value, have maps of their own: a map keyed by the whole Value hashes and compares
// it field by field, which cost a fifth of loading facts.
type symbols struct {
	ints  map[int64]uint32
	strs  map[string]uint32
	other map[Value]uint32 // floats and booleans
	vals  []Value
}

func newSymbols() symbols {
	return symbols{ints: make(map[int64]uint32), strs: make(map[string]uint32), other: make(map[Value]uint32), vals: []Value{{}}}
}

// lookup returns v's id, if v is interned.
func (s *symbols) lookup(v Value) (uint32, bool) {
	var id uint32
	var ok bool
	switch v.kind {
	case KindInt:
		id, ok = s.ints[v.n]
	case KindString:
		id, ok = s.strs[v.s]
	default:
		id, ok = s.other[v]
	}
	return id, ok
}

func (s *symbols) intern(v Value) uint32 {
	if id, ok := s.lookup(v); ok {
		return id
	}
	id := uint32(len(s.vals))
	s.vals = append(s.vals, v)
	switch v.kind {
	case KindInt:
		s.ints[v.n] = id
	case KindString:
		s.strs[v.s] = id
	default:
		s.other[v] = id
	}
	return id
}

// relation holds every fact of one relKey. Facts of one predicate may carry different sets
// of argument names; each set (a shape) has its own table, and a pattern reads every table
// whose names include the pattern's.
type relation struct {
	key    relKey
	tables []*table
}

// table holds the facts of one shape: a relation and a sorted list of argument names.
type table struct {
	id    uint32 // its index in Engine.tables
	rel   *relation
	names []string
	facts *factArena // where its facts live
	byKey factSet
	list  []fref
	// indexes are hash indexes over sets of columns, built on first use. A table has
	// few, so a slice serves better than a map.
	indexes []*index
}

// index is a hash index over some columns of a table: the facts whose values in those
// columns hash alike share a bucket. It holds list[:upto]: an insert leaves it alone, and
// the next lookup through it indexes what was appended since. A fixpoint inserts many
// facts through indexes it never reads (the closure of a 1,000-chain filled one of
// 500,500 entries that way, a tenth of its time); a mutation that reads them pays for
// the catch-up once.
type index struct {
	mask    uint64 // the columns, as a bit set
	cols    []int
	buckets map[uint64][]fref
	upto    int
}

func (ix *index) add(f *fact) {
	h := hashCols(f.values(), ix.cols)
	ix.buckets[h] = append(ix.buckets[h], f.ref)
}

func (ix *index) remove(f *fact) {
	h := hashCols(f.values(), ix.cols)
	b := ix.buckets[h]
	for i, g := range b {
		if g == f.ref {
			b[i] = b[len(b)-1]
			b = b[:len(b)-1]
			break
		}
	}
	if len(b) == 0 {
		delete(ix.buckets, h)
	} else {
		ix.buckets[h] = b
	}
}

// fact is the engine's record of one ground atom. It is stored in its table while it holds
// (tier() != 0) and, within a mutation, while the mutation touches it.
type fact struct {
	// vals holds the value ids, aligned with its table's names, of a fact with more than inline
	// holds; read them with values.
	vals []uint32
	// inline holds the values (when vals is nil) and the premises of der (when inl is not
	// 0) of small facts, saving allocations. Slices pointing into the fact itself would
	// cost the collector two pointers to follow, and two write barriers, per derived fact,
	// in a fixpoint where the collector took a third of the time.
	inline     [4]uint32
	inlinePrem [2]fref

	bases    []baseRef     // the base ids asserting this atom, by Seq (Fact), then oldest first
	baseTier contract.Tier // strongest base tier; 0 when not base
	derTier  contract.Tier // tier of the best derivation; 0 when not derived
	was      contract.Tier // the tier when the mutation of stamp began
	inl      uint8         // the number of der's premises in inlinePrem; 0 when they are der.prem
	nvals    uint8         // the number of values in inline, when vals is nil
	pos      int32         // position in its table's list; -1 when not stored
	// tab is the index of its table in Engine.tables ([Engine.tabOf]). A pointer would be
	// one more for the collector to follow per fact.
	tab uint32
	ref fref // its own address in its engine's arena
	// gen counts the facts its slot held before it, so that a reader holding the slot
	// across a mutation (Facts) can tell the fact it read from one that reuses the slot.
	gen uint32
	der derivation // the best derivation, when derTier != 0

	id string // the deterministic derived id, computed on demand

	stamp   uint64 // the mutation that last saved this fact's state for undo
	odStamp uint64 // the stratum pass that over-deleted this fact
}

type baseRef struct {
	id   string
	tier contract.Tier
	seq  uint64
}

// derivation is one way a fact follows: a rule and the facts its positive body literals
// matched, in body order (nil for built-ins and NAF literals). The premises of a fact's
// derivation are prem, or, when the fact's inl is not 0, the first inl of its inlinePrem.
type derivation struct {
	rule uint32 // the rule's index in Engine.ruleIDs; 0 for no derivation
	prem []fref
}

// premises returns the premises of the fact's derivation.
func (f *fact) premises() []fref {
	if f.inl != 0 {
		return f.inlinePrem[:f.inl:f.inl]
	}
	return f.der.prem
}

// values returns the fact's value ids, aligned with its table's names: vals, or, when vals
// is nil, the first nvals of inline.
func (f *fact) values() []uint32 {
	if f.vals != nil {
		return f.vals
	}
	return f.inline[:f.nvals:f.nvals]
}

// fact returns the fact r addresses.
func (e *Engine) fact(r fref) *fact { return e.facts.at(r) }

// tabOf returns f's table.
func (e *Engine) tabOf(f *fact) *table { return e.tables[f.tab] }

// tierOf returns the stronger of two tiers, where 0 means "no support".
func tierOf(base, der contract.Tier) contract.Tier {
	switch {
	case base == 0:
		return der
	case der == 0:
		return base
	}
	return contract.Stronger(base, der)
}

// tier returns the fact's tier, or 0 when it does not hold.
func (f *fact) tier() contract.Tier { return tierOf(f.baseTier, f.derTier) }

func (f *fact) recomputeBase() {
	f.baseTier = 0
	for _, b := range f.bases {
		f.baseTier = tierOf(f.baseTier, b.tier)
	}
}

// encodeKey writes value ids as a map key.
func encodeKey(buf []byte, vals []uint32) []byte {
	buf = buf[:0]
	for _, v := range vals {
		buf = binary.LittleEndian.AppendUint32(buf, v)
	}
	return buf
}

func hashCols(vals []uint32, cols []int) uint64 {
	if len(cols) == 1 {
		return uint64(vals[cols[0]])
	}
	h := uint64(14695981039346656037)
	for _, c := range cols {
		h ^= uint64(vals[c])
		h *= 1099511628211
		h ^= h >> 29
	}
	return h
}

// hashVals hashes the given values as hashCols hashes the same values taken from columns.
func hashVals(vals []uint32) uint64 {
	if len(vals) == 1 {
		return uint64(vals[0])
	}
	h := uint64(14695981039346656037)
	for _, v := range vals {
		h ^= uint64(v)
		h *= 1099511628211
		h ^= h >> 29
	}
	return h
}

// get returns the stored fact with exactly vals, or nil.
func (t *table) get(vals []uint32) *fact { return t.byKey.get(vals) }

// find returns the stored fact with exactly vals, or nil and the slot for insertAt.
func (t *table) find(vals []uint32) (*fact, int) { return t.byKey.find(vals) }

func (t *table) insert(f *fact) { t.insertAt(f, -1) }

// insertAt stores f at the slot find returned for its values, with no change to t since.
func (t *table) insertAt(f *fact, slot int) {
	f.pos = int32(len(t.list))
	t.list = append(t.list, f.ref)
	t.byKey.addAt(f, slot)
}

func (t *table) remove(f *fact) {
	pos, lastPos := int(f.pos), len(t.list)-1
	last := t.facts.at(t.list[lastPos])
	for _, ix := range t.indexes {
		if pos < ix.upto {
			ix.remove(f)
			// last moves into f's place, which the index covers: it must hold last.
			if lastPos >= ix.upto && last != f {
				ix.add(last)
			}
		}
		ix.upto = min(ix.upto, lastPos)
	}
	t.list[pos] = last.ref
	last.pos = int32(pos)
	t.list = t.list[:lastPos]
	f.pos = -1
	t.byKey.remove(f)
}

// lookup returns the facts whose columns cols may hold vals (a hash bucket: callers check
// the values).
func (t *table) lookup(mask uint64, cols []int, vals []uint32) []fref {
	var ix *index
	for _, x := range t.indexes {
		if x.mask == mask {
			ix = x
			break
		}
	}
	if ix == nil {
		ix = &index{mask: mask, cols: append([]int(nil), cols...), buckets: make(map[uint64][]fref)}
		t.indexes = append(t.indexes, ix)
	}
	for _, r := range t.list[ix.upto:] {
		ix.add(t.facts.at(r))
	}
	ix.upto = len(t.list)
	return ix.buckets[hashVals(vals)]
}

// atom rebuilds the fact's Atom.
func (e *Engine) atomOf(f *fact) Atom {
	vals := f.values()
	t := e.tabOf(f)
	a := Atom{Pred: t.rel.key.pred, Neg: t.rel.key.neg, Args: make([]Arg, len(vals))}
	for i, v := range vals {
		a.Args[i] = Arg{Name: t.names[i], Term: Term{Val: e.syms.vals[v]}}
	}
	return a
}

// derivedID returns the fact's deterministic id: "d_" and the first 20 hex digits of the
// sha256 of its canonical text (Atom.String), so that rebuilding a Board gives the same ids.
// Ids are registered for Lookup lazily, by [Engine.find].
func (e *Engine) derivedID(f *fact) string {
	if f.id == "" {
		e.textBuf = e.canonical(e.textBuf[:0], f)
		f.id = idOf(e.textBuf)
	}
	return f.id
}

// assignIDs computes the derived ids of the facts that hold and lack one, carving them
// from one string.
func (e *Engine) assignIDs(fs []fref) {
	n := 0
	for _, r := range fs {
		if f := e.fact(r); f.id == "" && f.tier() != 0 {
			n++
		}
	}
	if n < 2 {
		return
	}
	// A Builder hands its bytes over as the string without copying them.
	var block strings.Builder
	block.Grow(n * idLen)
	var id [idLen]byte
	for _, r := range fs {
		if f := e.fact(r); f.id == "" && f.tier() != 0 {
			e.textBuf = e.canonical(e.textBuf[:0], f)
			block.Write(appendID(id[:0], e.textBuf))
		}
	}
	s := block.String()
	for _, r := range fs {
		if f := e.fact(r); f.id == "" && f.tier() != 0 {
			f.id, s = s[:idLen], s[idLen:]
		}
	}
}

// idLen is the length of a derived id: "d_" and 20 hex digits.
const idLen = 22

func appendID(b, text []byte) []byte {
	sum := sha256.Sum256(text)
	b = append(b, 'd', '_')
	return hex.AppendEncode(b, sum[:10])
}

func idOf(text []byte) string {
	return string(appendID(make([]byte, 0, idLen), text))
}

// canonical appends f's text exactly as Atom.String writes it.
func (e *Engine) canonical(b []byte, f *fact) []byte {
	t := e.tabOf(f)
	if t.rel.key.neg {
		b = append(b, '~')
	}
	b = append(b, t.rel.key.pred...)
	b = append(b, '(')
	for i, v := range f.values() {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, t.names[i]...)
		b = append(b, ": "...)
		b = appendValue(b, e.syms.vals[v])
	}
	return append(b, ')')
}

// appendValue appends v as Value.String writes it.
func appendValue(b []byte, v Value) []byte {
	switch v.kind {
	case KindString:
		return strconv.AppendQuote(b, v.s)
	case KindInt:
		return strconv.AppendInt(b, v.n, 10)
	case KindBool:
		return strconv.AppendBool(b, v.BoolVal())
	}
	return append(b, v.String()...)
}

// DerivedID returns the id the engine gives the ground atom a when it is derived.
func DerivedID(a Atom) string { return idOf([]byte(a.String())) }

// entryOf describes a stored fact.
func (e *Engine) entryOf(f *fact) Entry {
	return e.entryInto(f, make([]Arg, len(f.values())))
}

// entryInto describes a stored fact, writing its arguments into args (one per value).
func (e *Engine) entryInto(f *fact, args []Arg) Entry {
	t := e.tabOf(f)
	for i, v := range f.values() {
		args[i] = Arg{Name: t.names[i], Term: Term{Val: e.syms.vals[v]}}
	}
	a := Atom{Pred: t.rel.key.pred, Neg: t.rel.key.neg, Args: args}
	en := Entry{Atom: a, Tier: f.tier(), Base: len(f.bases) > 0, Derived: f.derTier != 0, DerivedTier: f.derTier}
	if en.Base {
		en.ID = f.bases[0].id
	} else {
		en.ID = e.derivedID(f)
	}
	return en
}

// premiseID is the id a premise is cited by: its first base id, else its derived id.
func (e *Engine) premiseID(f *fact) string {
	if len(f.bases) > 0 {
		return f.bases[0].id
	}
	return e.derivedID(f)
}

// relation returns the relation for k, creating it when create is set.
func (e *Engine) relation(k relKey, create bool) *relation {
	r := e.rels[k]
	if r == nil && create {
		r = &relation{key: k}
		e.rels[k] = r
	}
	return r
}

// tableFor returns r's table for the sorted names, creating it.
func (e *Engine) tableFor(r *relation, names []string) *table {
	for _, t := range r.tables {
		if equalStrings(t.names, names) {
			return t
		}
	}
	t := &table{id: uint32(len(e.tables)), rel: r, names: names, facts: &e.facts, byKey: factSet{facts: &e.facts}}
	r.tables = append(r.tables, t)
	e.tables = append(e.tables, t)
	return t
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// columnsOf maps each of names (sorted) to its column in t, or returns nil when t lacks one.
func columnsOf(t *table, names []string) []int {
	cols := make([]int, len(names))
	j := 0
	for i, n := range names {
		for j < len(t.names) && t.names[j] < n {
			j++
		}
		if j == len(t.names) || t.names[j] != n {
			return nil
		}
		cols[i] = j
	}
	return cols
}
