package engine

import (
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// mode selects which facts a join reads.
type mode uint8

const (
	// modeAlive reads the facts that hold now, checks NAF literals and refuses on an
	// arithmetic error.
	modeAlive mode = iota
	// modeAny reads every stored fact, including those a running mutation has removed, and
	// treats NAF literals as true: it finds a superset of the derivations that held before
	// the mutation, which is what over-deletion needs. Arithmetic errors prune silently.
	modeAny
)

// joiner evaluates one rule body. emit is called for every complete binding with the
// weakest tier of the matched facts; it returns an error to stop the join.
type joiner struct {
	e    *Engine
	rule *crule
	mode mode
	env  []uint32
	prem []*fact  // indexed by body position
	in   []Value  // scratch for built-in inputs
	key  []uint32 // scratch for index lookups
	cols []int    // scratch for index lookups
	emit func(tier contract.Tier) error
}

func (e *Engine) newJoiner(r *crule, m mode, emit func(contract.Tier) error) *joiner {
	return &joiner{e: e, rule: r, mode: m, env: make([]uint32, len(r.varNames)),
		prem: make([]*fact, len(r.body)), emit: emit}
}

func (j *joiner) reset() {
	clear(j.env)
	clear(j.prem)
}

// all runs the whole body with nothing bound.
func (j *joiner) all() error {
	j.reset()
	return j.run(j.rule.plan(-1, 0), 0, contract.TierVerified)
}

// from runs the body with literal i matched against f.
func (j *joiner) from(i int, f *fact) error {
	j.reset()
	l := j.rule.body[i]
	cols := l.matchOf(j.e.tabOf(f))
	if cols == nil {
		return nil
	}
	if _, ok := j.bind(l, cols, f); !ok {
		return nil
	}
	t := contract.TierVerified
	if l.kind == litPos {
		j.prem[i] = f
		t = f.tier()
		if j.mode == modeAny || t == 0 {
			t = contract.TierVerified
		}
	}
	return j.run(j.rule.plan(i, 0), 0, t)
}

// withBound runs the body with the variable slots in env preset (non-zero entries).
func (j *joiner) withBound(env []uint32) error {
	clear(j.prem)
	copy(j.env, env)
	var bound uint64
	for s, v := range j.env {
		if v != 0 {
			bound |= 1 << s
		}
	}
	return j.run(j.rule.plan(-1, bound), 0, contract.TierVerified)
}

// bind matches f's columns against the literal's terms, binding free variables. It returns
// the mask of the slots it bound, and undoes them on failure.
func (j *joiner) bind(l *clit, cols []int, f *fact) (uint64, bool) {
	var bound uint64
	vals := f.values()
	for k, t := range l.terms {
		v := vals[cols[k]]
		switch {
		case t.slot < 0:
			if v != t.val {
				j.unbind(bound)
				return 0, false
			}
		case j.env[t.slot] != 0:
			if v != j.env[t.slot] {
				j.unbind(bound)
				return 0, false
			}
		default:
			j.env[t.slot] = v
			bound |= 1 << t.slot
		}
	}
	return bound, true
}

func (j *joiner) unbind(mask uint64) {
	for mask != 0 {
		s := lowestBit(mask)
		j.env[s] = 0
		mask &^= 1 << s
	}
}

func (j *joiner) value(t slotTerm) uint32 {
	if t.slot < 0 {
		return t.val
	}
	return j.env[t.slot]
}

func (j *joiner) run(p []step, i int, tier contract.Tier) error {
	if i == len(p) {
		return j.emit(tier)
	}
	st := p[i]
	l := st.lit
	switch l.kind {
	case litBuiltin:
		return j.builtin(p, i, tier)
	case litNAF:
		if j.mode == modeAny || !j.exists(l) {
			return j.run(p, i+1, tier)
		}
		return nil
	}
	for _, m := range l.tables() {
		cands := m.tab.list
		if st.bound != 0 {
			var mask uint64
			// cols and key are scratch shared by every level of the recursion: they are
			// done with once lookup returns, and a fresh array per step cost a clear of
			// maxArgs words each time.
			j.cols, j.key = j.cols[:0], j.key[:0]
			for k, t := range l.terms {
				if st.bound&(1<<k) != 0 {
					mask |= 1 << m.cols[k]
					j.cols = append(j.cols, m.cols[k])
					j.key = append(j.key, j.value(t))
				}
			}
			// cols ascend: a literal's names and a table's are both sorted, so an index
			// over a set of columns is found whatever the literal.
			cands = m.tab.lookup(mask, j.cols, j.key)
		}
		for _, r := range cands {
			f := j.e.fact(r)
			ft := f.tier()
			if j.mode == modeAlive && ft == 0 {
				continue
			}
			newly, ok := j.bind(l, m.cols, f)
			if !ok {
				continue
			}
			j.prem[l.pos] = f
			t := tier
			if j.mode == modeAlive {
				t = contract.Weaker(tier, ft)
			}
			err := j.run(p, i+1, t)
			j.unbind(newly)
			j.prem[l.pos] = nil
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// exists reports whether a fact that holds matches the (fully bound) literal.
func (j *joiner) exists(l *clit) bool {
	for _, m := range l.tables() {
		var mask uint64
		var colBuf [maxArgs]int
		var keyBuf [maxArgs]uint32
		cols, key := colBuf[:0], keyBuf[:0]
		for k, t := range l.terms {
			mask |= 1 << m.cols[k]
			cols = append(cols, m.cols[k])
			key = append(key, j.value(t))
		}
		var cands []fref
		if mask == 0 {
			cands = m.tab.list
		} else {
			cands = m.tab.lookup(mask, cols, key)
		}
	next:
		for _, r := range cands {
			f := j.e.fact(r)
			if f.tier() == 0 {
				continue
			}
			vals := f.values()
			for k, c := range cols {
				if vals[c] != key[k] {
					continue next
				}
			}
			return true
		}
	}
	return false
}

func (j *joiner) builtin(p []step, i int, tier contract.Tier) error {
	l := p[i].lit
	n := len(l.bi.in)
	j.in = j.in[:0]
	for _, t := range l.terms[:n] {
		j.in = append(j.in, j.e.syms.vals[j.value(t)])
	}
	v, ok, err := l.bi.fn(j.in)
	if err != nil {
		if j.mode == modeAny {
			return nil
		}
		return j.arithmetic(l, err)
	}
	if l.bi.out == "" {
		if ok == l.neg {
			return nil
		}
		return j.run(p, i+1, tier)
	}
	out := l.terms[n]
	id := j.e.syms.intern(v)
	switch {
	case out.slot < 0:
		if out.val != id {
			return nil
		}
	case j.env[out.slot] != 0:
		if j.env[out.slot] != id {
			return nil
		}
	default:
		j.env[out.slot] = id
		err := j.run(p, i+1, tier)
		j.env[out.slot] = 0
		return err
	}
	return j.run(p, i+1, tier)
}

// arithmetic builds the refusal for a producer that has no exact result, naming the rule
// and the values.
func (j *joiner) arithmetic(l *clit, cause error) error {
	args := make([]string, len(l.bi.in))
	for k, name := range l.bi.in {
		args[k] = name + ": " + j.in[k].String()
	}
	call := fmt.Sprintf("%s(%s)", l.bi.name, strings.Join(args, ", "))
	code := contract.CodeArithmetic
	if strings.Contains(cause.Error(), "longer than") {
		code = contract.CodeResourceLimit
	}
	return &contract.Error{Code: code, Err: cause, Teaching: fmt.Sprintf(
		"%s: %s %s; exact arithmetic refuses rather than rounds: correct the facts, guard the rule (e.g. neq(left: D, right: 0)), or use floats",
		where(j.rule.src), call, cause)}
}
