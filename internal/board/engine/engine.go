package engine

import (
	"github.com/docketrun/docket/internal/contract"
)

// This file is the engine's public surface: the types the Board, the text syntax and the
// capability parser are built against.

// Default safety caps. A cap refuses with resource_limit and a teaching sentence; it never
// hangs and never leaves the engine half-changed.
const (
	DefaultMaxFacts      = 5_000_000 // facts on the engine, base and derived
	DefaultMaxIterations = 1_000_000 // semi-naive rounds per stratum
	DefaultMaxJoinWidth  = 16        // literals in one rule body
)

// Limits are the engine's safety caps; a zero field takes its default.
type Limits struct {
	MaxFacts      int // facts stored at once, base and derived; default DefaultMaxFacts
	MaxIterations int // semi-naive rounds of one stratum in one mutation; default DefaultMaxIterations
	MaxJoinWidth  int // literals in one rule body or query; default DefaultMaxJoinWidth
}

// Fact is a base fact given to the engine: a ground atom with the node id the Board gave it
// and its tier. Seq orders the facts that assert one atom: the lowest names it
// ([Entry.ID]), facts of one Seq (0 for all, say) in the order asserted. The Board gives a
// node's Seq, so a Board that takes a fact back in after a rollback names the atom as a
// Board built from its records does, not by whichever came back last.
type Fact struct {
	ID   string
	Atom Atom
	Tier contract.Tier
	Seq  uint64
}

// Entry is a fact as the engine holds it. A fact may be both base (asserted with one or
// more ids) and derived; Tier is the strongest of its base tiers and its best derivation.
type Entry struct {
	ID      string // the first base id, or the derived id (deterministic from the atom)
	Atom    Atom
	Tier    contract.Tier
	Base    bool // asserted by someone (not only derived)
	Derived bool // derivable by at least one rule
	// DerivedTier is the tier of the best derivation alone, 0 when not Derived. Case
	// certification needs it: an acceptance fact counts only as derived, never as asserted.
	DerivedTier contract.Tier
}

// Bindings maps variable names to values.
type Bindings map[string]Value

// Row is one answer to [Engine.Query]: the variable bindings, the ids of the facts the
// positive literals matched (in body order, built-ins and NAF literals omitted), and the
// weakest tier among them.
type Row struct {
	Bindings Bindings
	Premises []string
	Tier     contract.Tier
}

// Derivation is the answer to "why is this true": the fact, and either its base support
// or the rule and premises of its best derivation.
type Derivation struct {
	ID       string
	Atom     Atom
	Tier     contract.Tier
	Base     bool          // true when the best support is a base fact
	Rule     string        // the rule id of the best derivation, when not Base
	Premises []*Derivation // the premises of that derivation, in body order
}

// Delta is what one mutation changed.
type Delta struct {
	Added   []Entry // facts that now hold and did not before
	Removed []Entry // facts that held and no longer do
	Retier  []Entry // facts whose tier changed, with the new tier
}

// Engine holds a program (rules) and its facts at fixpoint. Every mutation is
// all-or-nothing: an error leaves the engine exactly as it was. Mutations are incremental
// (see eval.go): their cost follows what they affect, not the size of the Board. An Engine
// is not safe for concurrent use; reads that compute derived ids on demand (Lookup,
// Explain, Facts) also write, so even they need the caller's lock.
//
// p and ~p are independent relations: the engine does not refuse a Board on which both
// hold; rules decide what a contradiction means.
//
// Methods:
//
//	New(Limits) *Engine
//	AddRules(...Rule) (Delta, error)     rule_unsafe, stratification, resource_limit, node_conflict
//	RemoveRules(...string) (Delta, error) node_not_found
//	Assert(...Fact) (Delta, error)       invalid_argument (non-ground), node_conflict, resource_limit
//	Retract(...string) (Delta, error)    node_not_found
//	Lookup(id) (Entry, bool)             by base id or derived id
//	Holds(Atom) (Entry, bool)            a ground atom
//	Match(pattern Atom) iter.Seq2[Entry, Bindings]
//	Query([]Literal) ([]Row, error)      conjunctive query with built-ins and NAF
//	Explain(id) (*Derivation, error)
//	Facts() iter.Seq[Entry]              every fact, in a deterministic order
//	Rules() []Rule
//	Len() int
//	Reads(pred, neg) bool                whether a rule reads the relation
//	SetDeltas(bool)                      whether mutations report their Delta (default on)
type Engine struct {
	limits Limits
	syms   symbols
	rels   map[relKey]*relation
	tables []*table // every table of every relation, by id
	// ruleIDs are the ids of the rules derivations name, by [Engine.ruleRef]; ruleIDs[0]
	// is "", the rule of no derivation.
	ruleIDs  []string
	ruleRefs map[string]uint32
	prog     *program

	baseIDs    map[string]*fact // base id -> fact
	derivedIDs map[string]*fact // derived id -> fact, for the ids computed so far
	pending    []fref           // facts committed since their derived ids were last registered
	stored     int              // facts in tables
	facts      factArena        // where facts live
	prems      premSlab         // where premise lists that do not fit in a fact come from

	noDeltas bool // mutations return an empty Delta; see [Engine.SetDeltas]

	stamp   uint64   // counts mutations and stratum passes
	textBuf []byte   // scratch for canonical text
	valBuf  []uint32 // scratch for head values
}

// New returns an empty engine with the given caps; a zero field takes its default.
func New(lim Limits) *Engine {
	if lim.MaxFacts <= 0 {
		lim.MaxFacts = DefaultMaxFacts
	}
	if lim.MaxIterations <= 0 {
		lim.MaxIterations = DefaultMaxIterations
	}
	if lim.MaxJoinWidth <= 0 {
		lim.MaxJoinWidth = DefaultMaxJoinWidth
	}
	p, _ := newProgram(nil)
	return &Engine{
		limits: lim, syms: newSymbols(), rels: make(map[relKey]*relation), prog: p,
		baseIDs: make(map[string]*fact), derivedIDs: make(map[string]*fact),
		ruleIDs: []string{""}, ruleRefs: make(map[string]uint32),
		valBuf: make([]uint32, 0, maxArgs),
	}
}

// SetDeltas chooses whether mutations report what they changed (the default) or return an
// empty Delta. A caller that ignores the Delta should turn it off: the entries of a large
// fixpoint, each with its derived id (a sha256 of the fact's text), cost about as much to
// build as the facts cost to derive, and their garbage as much again. Provenance, tiers,
// Lookup by derived id and Explain are unaffected; derived ids are still computed on demand.
func (e *Engine) SetDeltas(on bool) { e.noDeltas = !on }
