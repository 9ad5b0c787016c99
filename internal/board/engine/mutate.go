package engine

import (
	"slices"

	"github.com/docketrun/docket/internal/contract"
)

// Assert adds base facts. Each needs a fresh id, a valid tier and a ground atom; a fact
// whose atom already holds adds a base id to it (and may strengthen it). Errors:
// invalid_argument (a non-ground or malformed atom, a built-in name, a missing tier),
// node_conflict (an id in use), and, from evaluation, arithmetic and resource_limit.
func (e *Engine) Assert(facts ...Fact) (Delta, error) {
	type prepared struct {
		id   string
		tab  *table
		vals []uint32
		tier contract.Tier
		seq  uint64
	}
	ps := make([]prepared, 0, len(facts))
	// The facts' value ids are carved from shared blocks, sized to what the facts need
	// up to 1,024 ids: create copies them, so a block is scratch, and the Board asserts
	// one fact a call, for which a block of 1,024 was 4 KB to hold one id or two.
	var valBlock []uint32
	need := 0
	for _, f := range facts {
		need += len(f.Atom.Args)
	}
	batch := make(map[string]bool, len(facts))
	for _, f := range facts {
		if f.ID == "" {
			return Delta{}, errorf(contract.CodeInvalidArgument, "a fact has no id; give every fact a unique node id")
		}
		if e.baseIDs[f.ID] != nil || batch[f.ID] {
			return Delta{}, errorf(contract.CodeNodeConflict,
				"the id %s is already in use; give the fact a new id, or retract the old one first", f.ID)
		}
		batch[f.ID] = true
		if !f.Tier.Valid() {
			return Delta{}, errorf(contract.CodeInvalidArgument, "fact %s has no valid tier; give it the tier of its source", f.ID)
		}
		a, err := checkFactAtom(f.Atom)
		if err != nil {
			return Delta{}, err
		}
		if IsBuiltin(a.Pred) {
			return Delta{}, errorf(contract.CodeInvalidArgument,
				"fact %s uses the built-in %s as its predicate; choose another predicate name", f.ID, a.Pred)
		}
		if len(valBlock) < len(a.Args) {
			valBlock = make([]uint32, max(min(1024, need), len(a.Args)))
		}
		vals := valBlock[:len(a.Args):len(a.Args)]
		valBlock = valBlock[len(a.Args):]
		for i, arg := range a.Args {
			if arg.Term.IsVar() || arg.Term.Agg != "" {
				return Delta{}, errorf(contract.CodeInvalidArgument,
					"fact %s is not ground: argument %s is a variable; give every argument a value", f.ID, arg.Name)
			}
			vals[i] = e.syms.intern(arg.Term.Val)
		}
		tab := e.tableFor(e.relation(relKey{a.Pred, a.Neg}, true), argNames(a))
		ps = append(ps, prepared{id: f.ID, tab: tab, vals: vals, tier: f.Tier, seq: f.Seq})
	}
	t := e.begin()
	for _, p := range ps {
		f, err := t.factFor(p.tab, p.vals)
		if err != nil {
			t.rollback()
			return Delta{}, err
		}
		t.touch(f)
		// In Seq order, after those of the same Seq: a fact asserted in order goes last.
		i := len(f.bases)
		for i > 0 && f.bases[i-1].seq > p.seq {
			i--
		}
		f.bases = slices.Insert(slices.Clip(f.bases), i, baseRef{id: p.id, tier: p.tier, seq: p.seq})
		f.recomputeBase()
		t.setID(p.id, f)
	}
	return t.finish()
}

// Retract removes base facts by id, and with them everything that rested only on them.
// Errors: node_not_found (an unknown id), not_retractable (a derived id), and, from
// evaluation, arithmetic and resource_limit (a retraction can make a NAF literal true).
func (e *Engine) Retract(ids ...string) (Delta, error) {
	for _, id := range ids {
		if e.baseIDs[id] != nil {
			continue
		}
		if _, ok := e.Lookup(id); ok {
			return Delta{}, errorf(contract.CodeNotRetractable,
				"%s is derived, not asserted; retract one of its premises (see Explain) or remove the rule", id)
		}
		return Delta{}, errorf(contract.CodeNodeNotFound, "no fact has the id %s; check the id against the Board", id)
	}
	t := e.begin()
	for _, id := range ids {
		f := e.baseIDs[id]
		if f == nil {
			continue // named twice in this call
		}
		t.touch(f)
		f.bases = slices.DeleteFunc(slices.Clone(f.bases), func(b baseRef) bool { return b.id == id })
		if len(f.bases) == 0 {
			f.bases = nil
		}
		f.recomputeBase()
		t.setID(id, nil)
	}
	return t.finish()
}

// AddRules adds rules and derives what follows. Errors: invalid_argument, node_conflict (a
// rule id in use), rule_unsafe, unknown_builtin, stratification, and, from evaluation,
// arithmetic and resource_limit.
func (e *Engine) AddRules(rules ...Rule) (Delta, error) {
	batch := make(map[string]bool, len(rules))
	all := slices.Clone(e.prog.rules)
	var added []*crule
	for _, r := range rules {
		if e.prog.byID[r.ID] != nil || batch[r.ID] {
			return Delta{}, errorf(contract.CodeNodeConflict,
				"the rule id %s is already in use; give the rule a new id, or remove the old rule first", r.ID)
		}
		batch[r.ID] = true
		cr, err := e.compileRule(r, e.limits)
		if err != nil {
			return Delta{}, err
		}
		all = append(all, cr)
		added = append(added, cr)
	}
	p, err := newProgram(all)
	if err != nil {
		return Delta{}, err
	}
	t := e.begin()
	t.newRules = make(map[*crule]bool, len(added))
	for _, r := range added {
		t.newRules[r] = true
	}
	e.prog = p
	return t.finish()
}

// RemoveRules removes rules by id, and everything that rested only on them. Errors:
// node_not_found, and, from evaluation, arithmetic and resource_limit.
func (e *Engine) RemoveRules(ids ...string) (Delta, error) {
	drop := make(map[*crule]bool, len(ids))
	for _, id := range ids {
		r := e.prog.byID[id]
		if r == nil {
			return Delta{}, errorf(contract.CodeNodeNotFound, "no rule has the id %s; check the id against the Board's rules", id)
		}
		drop[r] = true
	}
	var keep []*crule
	for _, r := range e.prog.rules {
		if !drop[r] {
			keep = append(keep, r)
		}
	}
	p, err := newProgram(keep)
	if err != nil {
		return Delta{}, err
	}
	t := e.begin()
	for _, r := range e.prog.rules { // in program order, so that evaluation is deterministic
		if !drop[r] {
			continue
		}
		if err := t.dropRule(r); err != nil {
			t.rollback()
			return Delta{}, err
		}
	}
	e.prog = p
	return t.finish()
}

// dropRule queues for over-deletion the facts r derives now.
func (t *txn) dropRule(r *crule) error {
	rel := r.headTab.rel
	if t.pendingOD == nil {
		t.pendingOD = make(map[*relation][]*fact)
	}
	if r.isAgg {
		for _, fr := range r.headTab.list {
			if f := t.e.fact(fr); f.derTier != 0 {
				t.pendingOD[rel] = append(t.pendingOD[rel], f)
			}
		}
		return nil
	}
	j := t.e.newJoiner(r, modeAny, nil)
	j.emit = func(contract.Tier) error {
		if f := r.headTab.get(j.headValsInto(r, t.e.valBuf[:0])); f != nil && f.derTier != 0 {
			t.pendingOD[rel] = append(t.pendingOD[rel], f)
		}
		return nil
	}
	return j.all()
}

// finish evaluates the mutation and commits it, or rolls it back on error.
func (t *txn) finish() (Delta, error) {
	if err := t.run(); err != nil {
		t.rollback()
		return Delta{}, err
	}
	d := t.commit()
	e := t.e
	if len(e.pending) > 2*e.stored+1024 {
		// Keep the list in proportion to the Board: drop facts that are gone, and register
		// those whose ids are already known.
		e.pending = slices.DeleteFunc(e.pending, func(r fref) bool {
			f := e.fact(r)
			if f.pos >= 0 && f.id != "" {
				e.derivedIDs[f.id] = f
			}
			return f.pos < 0 || f.id != ""
		})
	}
	return d, nil
}
