package engine

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// maxVars caps the variables of one rule or query, so that a set of them fits a uint64.
const maxVars = 64

type litKind uint8

const (
	litPos litKind = iota + 1
	litNAF
	litBuiltin
)

// slotTerm is a compiled term: a variable slot, or a constant value id when slot < 0.
type slotTerm struct {
	slot int
	val  uint32
}

// clit is a compiled body literal.
type clit struct {
	pos   int // position in the source body
	kind  litKind
	rel   *relation // positive and NAF literals; nil when a query names an unknown relation
	names []string  // sorted argument names (positive and NAF)
	terms []slotTerm
	bi    *builtin // built-ins: terms are bi.in then bi.out
	neg   bool     // a NAF literal over a built-in guard: true when the guard fails

	matches []tabMatch // tables of rel whose names include names, found so far
	seen    int        // how many of rel.tables have been examined
}

// tabMatch maps a literal's arguments to a table's columns.
type tabMatch struct {
	tab  *table
	cols []int
}

// tables returns the tables the literal can match, refreshed when the relation grew.
func (l *clit) tables() []tabMatch {
	if l.rel == nil {
		return nil
	}
	for ; l.seen < len(l.rel.tables); l.seen++ {
		t := l.rel.tables[l.seen]
		if cols := columnsOf(t, l.names); cols != nil {
			l.matches = append(l.matches, tabMatch{tab: t, cols: cols})
		}
	}
	return l.matches
}

// matchOf returns the literal's columns in t, or nil when it cannot match t's facts.
func (l *clit) matchOf(t *table) []int {
	for _, m := range l.tables() {
		if m.tab == t {
			return m.cols
		}
	}
	return nil
}

// crule is a compiled rule (or, with head == nil, a compiled query).
type crule struct {
	src      Rule
	ref      uint32 // its id's index in Engine.ruleIDs, which its derivations keep
	varNames []string
	body     []*clit
	headTab  *table
	head     []slotTerm // aligned with headTab.names
	aggs     []string   // aligned with head: the aggregate function, or ""
	isAgg    bool
	group    []int // head positions that are not aggregated (aggregate rules)
	plans    map[planKey][]step
	// fromPlans caches plan(start, 0) by start, the plan of every join from a frontier
	// fact: a map lookup per frontier fact and literal was 7% of a large fixpoint.
	fromPlans [][]step
}

type planKey struct {
	start int
	bound uint64
}

// step is one literal of a join plan, with the mask of its argument positions that are bound
// when it runs.
type step struct {
	lit   *clit
	bound uint64
}

// ruleRef returns the index of the rule id in e.ruleIDs, adding it. A derivation names its
// rule by this index, not by a pointer: that is one pointer fewer per derived fact for the
// collector to follow. An id added once keeps its index, so the list grows only with
// rule ids never seen before.
func (e *Engine) ruleRef(id string) uint32 {
	if ref, ok := e.ruleRefs[id]; ok {
		return ref
	}
	ref := uint32(len(e.ruleIDs))
	e.ruleIDs = append(e.ruleIDs, id)
	e.ruleRefs[id] = ref
	return ref
}

// compiler builds crules, interning constants and creating relations as it goes.
type compiler struct {
	e      *Engine
	create bool // create relations for literals (rules); queries only read
	slots  map[string]int
	names  []string
}

func (c *compiler) slot(name string) int {
	if s, ok := c.slots[name]; ok {
		return s
	}
	s := len(c.names)
	c.slots[name] = s
	c.names = append(c.names, name)
	return s
}

func (c *compiler) term(t Term) slotTerm {
	if t.IsVar() {
		return slotTerm{slot: c.slot(t.Var)}
	}
	return slotTerm{slot: -1, val: c.e.syms.intern(t.Val)}
}

// where names a rule for teaching sentences.
func where(r Rule) string {
	if r.ID == "" {
		return "the query"
	}
	return "rule " + r.ID
}

// checkAtom validates an atom from outside: names, sorted unique arguments, no zero
// constants, at most maxArgs arguments. It returns the atom with arguments sorted.
func checkAtom(a Atom) (Atom, error) {
	if len(a.Args) > maxArgs {
		return Atom{}, errorf(contract.CodeInvalidArgument,
			"%s has %d arguments; an atom takes at most %d", a.Pred, len(a.Args), maxArgs)
	}
	return NewAtom(a.Pred, a.Neg, a.Args...)
}

// checkFactAtom is checkAtom for Assert, which keeps nothing of the atom it checks (it
// interns the values and names the table): an atom already as NewAtom returns it, as
// the Board builds every fact, is returned as it is rather than copied; any other goes
// through checkAtom, for its copy and its refusals.
func checkFactAtom(a Atom) (Atom, error) {
	if len(a.Args) <= maxArgs && inAtomForm(a) {
		return a, nil
	}
	return checkAtom(a)
}

// inAtomForm reports whether NewAtom would accept a as it is: a valid predicate, valid
// argument names in strictly increasing order, and no zero constant.
func inAtomForm(a Atom) bool {
	if !validName(a.Pred) {
		return false
	}
	for i, arg := range a.Args {
		if !validName(arg.Name) || i > 0 && a.Args[i-1].Name >= arg.Name || !arg.Term.IsVar() && arg.Term.Val.IsZero() {
			return false
		}
	}
	return true
}

func (c *compiler) literal(r Rule, i int, l Literal) (*clit, error) {
	a, err := checkAtom(l.Atom)
	if err != nil {
		return nil, err
	}
	if bi := builtinNamed(a.Pred); bi != nil {
		return c.builtinLit(r, i, l, a, bi)
	}
	for _, arg := range a.Args {
		if arg.Term.Agg != "" {
			return nil, errorf(contract.CodeInvalidArgument,
				"%s uses the aggregate %s in its body; aggregates belong in the head", where(r), arg.Term.Agg)
		}
	}
	cl := &clit{pos: i, kind: litPos, rel: c.e.relation(relKey{a.Pred, a.Neg}, c.create)}
	if l.NAF {
		cl.kind = litNAF
	}
	for _, arg := range a.Args {
		cl.names = append(cl.names, arg.Name)
		cl.terms = append(cl.terms, c.term(arg.Term))
	}
	return cl, nil
}

func (c *compiler) builtinLit(r Rule, i int, l Literal, a Atom, bi *builtin) (*clit, error) {
	want := append(slices.Clone(bi.in), bi.out)
	if bi.out == "" {
		want = want[:len(bi.in)]
	}
	if a.Neg || (l.NAF && bi.out != "") {
		return nil, errorf(contract.CodeUnknownBuiltin,
			"%s writes %s; a built-in cannot be strongly negated, and only a guard may follow not", where(r), Literal{Atom: a, NAF: l.NAF})
	}
	got := make([]string, len(a.Args))
	for j, arg := range a.Args {
		got[j] = arg.Name
	}
	sorted := slices.Sorted(slices.Values(want))
	if !equalStrings(got, sorted) {
		return nil, errorf(contract.CodeUnknownBuiltin,
			"%s calls %s with arguments (%s); write %s", where(r), bi.name, strings.Join(got, ", "), bi.signature())
	}
	cl := &clit{pos: i, kind: litBuiltin, bi: bi, neg: l.NAF}
	for _, name := range want {
		t, _ := a.Get(name)
		if t.Agg != "" {
			return nil, errorf(contract.CodeInvalidArgument,
				"%s uses the aggregate %s in its body; aggregates belong in the head", where(r), t.Agg)
		}
		cl.terms = append(cl.terms, c.term(t))
	}
	return cl, nil
}

// compileRule checks and compiles r: names, built-ins, aggregates, range restriction,
// and the caps of lim.
func (e *Engine) compileRule(r Rule, lim Limits) (*crule, error) {
	if r.ID == "" {
		return nil, errorf(contract.CodeInvalidArgument, "a rule has no id; give every rule a unique id")
	}
	if !r.Tier.Valid() {
		return nil, errorf(contract.CodeInvalidArgument,
			"rule %s has no valid tier; give it the tier of whoever asserted it", r.ID)
	}
	head, err := checkAtom(r.Head)
	if err != nil {
		return nil, err
	}
	if IsBuiltin(head.Pred) {
		return nil, errorf(contract.CodeUnknownBuiltin,
			"rule %s derives %s, which is a built-in; choose another predicate name", r.ID, head.Pred)
	}
	c := &compiler{e: e, create: true, slots: make(map[string]int)}
	cr, err := c.body(r, lim)
	if err != nil {
		return nil, err
	}
	cr.headTab = e.tableFor(e.relation(relKey{head.Pred, head.Neg}, true), argNames(head))
	for _, arg := range head.Args {
		switch arg.Term.Agg {
		case "":
		case "count", "sum", "min", "max":
			if !arg.Term.IsVar() {
				return nil, errorf(contract.CodeInvalidArgument,
					"rule %s aggregates the constant %s; aggregate a variable, e.g. %s(X)", r.ID, arg.Term.Val, arg.Term.Agg)
			}
			cr.isAgg = true
		default:
			return nil, errorf(contract.CodeInvalidArgument,
				"rule %s uses the aggregate %q; use count, sum, min or max", r.ID, arg.Term.Agg)
		}
		if arg.Term.IsVar() {
			if _, ok := c.slots[arg.Term.Var]; !ok {
				return nil, errorf(contract.CodeRuleUnsafe,
					"variable %s in the head of rule %s is not bound by its body; bind %s with a positive literal or a built-in result",
					arg.Term.Var, r.ID, arg.Term.Var)
			}
		}
		cr.head = append(cr.head, c.term(arg.Term))
		cr.aggs = append(cr.aggs, arg.Term.Agg)
	}
	if cr.isAgg {
		for i, a := range cr.aggs {
			if a == "" {
				cr.group = append(cr.group, i)
			}
		}
	}
	cr.src = r
	cr.src.Head = head
	cr.ref = e.ruleRef(r.ID)
	return cr, nil
}

func argNames(a Atom) []string {
	names := make([]string, len(a.Args))
	for i, arg := range a.Args {
		names[i] = arg.Name
	}
	return names
}

// compileQuery compiles a conjunctive query; it creates no relations.
func (e *Engine) compileQuery(lits []Literal, lim Limits) (*crule, error) {
	c := &compiler{e: e, slots: make(map[string]int)}
	return c.body(Rule{Body: lits}, lim)
}

// body compiles r's body and checks range restriction: every variable of a NAF literal and
// every built-in input must be bound by a positive literal or by a producer's result.
func (c *compiler) body(r Rule, lim Limits) (*crule, error) {
	if len(r.Body) > lim.MaxJoinWidth {
		return nil, errorf(contract.CodeResourceLimit,
			"%s has %d body literals; the limit is %d: split it into smaller rules joined by an intermediate predicate",
			where(r), len(r.Body), lim.MaxJoinWidth)
	}
	cr := &crule{src: r, plans: make(map[planKey][]step)}
	for i, l := range r.Body {
		cl, err := c.literal(r, i, l)
		if err != nil {
			return nil, err
		}
		cr.body = append(cr.body, cl)
	}
	if len(c.names) > maxVars {
		return nil, errorf(contract.CodeResourceLimit,
			"%s has %d variables; the limit is %d: split it into smaller rules", where(r), len(c.names), maxVars)
	}
	var bound uint64
	for _, l := range cr.body {
		if l.kind == litPos {
			bound |= termMask(l.terms)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, l := range cr.body {
			if l.kind != litBuiltin || l.bi.out == "" {
				continue
			}
			in, out := l.terms[:len(l.bi.in)], l.terms[len(l.bi.in)]
			if termMask(in)&^bound == 0 && out.slot >= 0 && bound&(1<<out.slot) == 0 {
				bound |= 1 << out.slot
				changed = true
			}
		}
	}
	for _, l := range cr.body {
		need := termMask(l.terms)
		if l.kind == litBuiltin && l.bi.out != "" {
			need = termMask(l.terms[:len(l.bi.in)])
		}
		if l.kind == litPos || need&^bound == 0 {
			continue
		}
		v := c.names[lowestBit(need&^bound)]
		what := "not " + r.Body[l.pos].Atom.String()
		if l.kind == litBuiltin {
			what = r.Body[l.pos].Atom.String()
		}
		return nil, errorf(contract.CodeRuleUnsafe,
			"variable %s in %s of %s is not bound; bind %s with a positive literal or a built-in result before using it",
			v, what, where(r), v)
	}
	cr.varNames = c.names
	return cr, nil
}

func termMask(ts []slotTerm) uint64 {
	var m uint64
	for _, t := range ts {
		if t.slot >= 0 {
			m |= 1 << t.slot
		}
	}
	return m
}

func lowestBit(m uint64) int {
	if m == 0 {
		return -1
	}
	return bits.TrailingZeros64(m)
}

// plan orders the body for a join that starts with literal start (matched against one fact;
// −1 for none) with the variables in bound already bound. Each step takes, in this order of
// preference: a guard whose inputs are bound; a NAF literal whose variables are bound; a
// producer whose inputs are bound and whose result a remaining positive literal uses (so
// that literal can use a hash index); the positive literal with the most bound arguments;
// any other producer whose inputs are bound. So filters run as early as possible, and a
// producer that only feeds the head runs after every positive literal: a division guarded
// by a positive literal, a guard or a NAF literal never sees the values they exclude.
func (r *crule) plan(start int, bound uint64) []step {
	if start >= 0 && bound == 0 {
		if r.fromPlans == nil {
			r.fromPlans = make([][]step, len(r.body))
		}
		if p := r.fromPlans[start]; p != nil {
			return p
		}
		p := r.planFor(start, bound)
		if p == nil {
			p = []step{} // cached: nil marks a plan not made yet
		}
		r.fromPlans[start] = p
		return p
	}
	key := planKey{start, bound}
	if p, ok := r.plans[key]; ok {
		return p
	}
	p := r.planFor(start, bound)
	r.plans[key] = p
	return p
}

// planFor computes the plan that plan caches.
func (r *crule) planFor(start int, bound uint64) []step {
	done := make([]bool, len(r.body))
	var p []step
	if start >= 0 {
		// A join that starts from a NAF literal (its atom stopped or started holding) still
		// checks that literal against what holds now.
		done[start] = r.body[start].kind != litNAF
		bound |= termMask(r.body[start].terms)
	}
	for {
		best := r.pick(done, bound)
		if best < 0 {
			break
		}
		l := r.body[best]
		var bm uint64
		for k, t := range l.terms {
			if t.slot < 0 || bound&(1<<t.slot) != 0 {
				bm |= 1 << k
			}
		}
		p = append(p, step{lit: l, bound: bm})
		done[best] = true
		bound |= termMask(l.terms)
	}
	return p
}

// pick chooses the next literal of a plan; see [crule.plan].
func (r *crule) pick(done []bool, bound uint64) int {
	var positives uint64 // variables the remaining positive literals use
	for i, l := range r.body {
		if !done[i] && l.kind == litPos {
			positives |= termMask(l.terms)
		}
	}
	const (
		none = iota
		lateProducer
		positive
		feedingProducer
		naf
		guard
	)
	best, bestClass, bestScore := -1, none, -1
	consider := func(i, class, score int) {
		if class > bestClass || class == bestClass && score > bestScore {
			best, bestClass, bestScore = i, class, score
		}
	}
	for i, l := range r.body {
		if done[i] {
			continue
		}
		switch l.kind {
		case litBuiltin:
			if l.bi.out == "" {
				if termMask(l.terms)&^bound == 0 {
					consider(i, guard, 0)
				}
				continue
			}
			if termMask(l.terms[:len(l.bi.in)])&^bound != 0 {
				continue
			}
			out := l.terms[len(l.bi.in)]
			if out.slot >= 0 && bound&(1<<out.slot) == 0 && positives&(1<<out.slot) != 0 {
				consider(i, feedingProducer, 0)
			} else {
				consider(i, lateProducer, 0)
			}
		case litNAF:
			if termMask(l.terms)&^bound == 0 {
				consider(i, naf, 0)
			}
		case litPos:
			score := 0
			for _, t := range l.terms {
				if t.slot < 0 || bound&(1<<t.slot) != 0 {
					score++
				}
			}
			consider(i, positive, score)
		}
	}
	return best
}
