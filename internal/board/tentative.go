package board

import (
	"fmt"

	"github.com/docketrun/docket/internal/contract"
)

// A Board change is made in memory before the transaction that writes it; when that
// transaction does not commit, the Board must hold again what it held before, or it
// would keep a change its log lacks (docs/architecture.md, "The write sequence").
// Building it again from the store does that at the cost of every node; a Tentative
// record takes back only what changed, with the records the changed nodes and Cases had
// before, applied as [Board.Apply] applies another Board's change.

// Tentative records what a Board held before the changes made since [Board.Tentative],
// so that [Tentative.Undo] takes them back; [Tentative.Keep] keeps them. One of the two
// ends the record; until then the Board keeps every record its changes replace. The
// record is of the Board's own calls: [Board.Apply] is how another Board's change is
// taken in, and it is not made under a record.
type Tentative struct {
	b       *Board
	seq     uint64
	recent  int
	caseSeq int
	nodes   map[string]*contract.Node          // a node's record before the first change of it; nil: absent
	order   []string                           // the nodes in the order first changed
	cases   map[contract.CaseID]*contract.Case // a Case's record before the first change of it; nil: absent
	ended   bool
}

// Tentative starts a record of the changes made to b from now on. b records one at a
// time: a second call while one is open is a bug of the caller, and panics.
func (b *Board) Tentative() *Tentative {
	if b.tentative != nil {
		panic("board: a tentative record is already open")
	}
	t := &Tentative{b: b, seq: b.seq, recent: len(b.recent), caseSeq: len(b.caseSeq)}
	b.tentative = t
	return t
}

// Keep ends the record and keeps the changes.
func (t *Tentative) Keep() {
	if t.ended {
		return
	}
	t.ended = true
	t.b.tentative = nil
}

// Undo ends the record and takes back every change made since it began, and reports
// whether b now holds exactly what it held then: the nodes with their ids and Seqs, the
// Cases, the facts base and derived with their tiers, the node naming each atom (a fact
// put back takes its place among those asserting its atom by its Seq, [engine.Fact]),
// and the counters ids are minted from, as a Board built from the records it held then
// would. Like a refused batch's rollback, it may leave an explanation showing another of
// equally good derivations than a build would show. It is not exact when a node it puts
// back is a rule, which the engine orders as rules were added, after those added since:
// then b must be built again from its records. A record that does not convert back means
// the Board broke its all-or-nothing contract; like a failed rollback, that panics.
func (t *Tentative) Undo() (exact bool) {
	if t.ended {
		return true
	}
	t.ended = true
	b := t.b
	defer func() { b.tentative = nil }()
	var puts []contract.Node
	var deleted []string
	for _, id := range t.order {
		before := t.nodes[id]
		_, now := b.nodes[id]
		switch {
		case before != nil:
			if before.Kind == contract.NodeRule {
				return false
			}
			puts = append(puts, *before) // put back, replacing what stands now
		case now:
			deleted = append(deleted, id)
		}
	}
	tx := b.begin()
	if err := b.applyNodes(tx, puts, deleted); err != nil {
		panic(fmt.Sprintf("board: undo of a tentative change failed: %v", err))
	}
	tx.commit() // still recorded: the ids it drops stay in recent, which is cut back below
	// Every id appended to recent since the record began is cut, which leaves recent as
	// it was: a node removed since stayed in it (dropNode compacts only outside a record).
	b.recent = b.recent[:t.recent]
	b.seq = t.seq
	// Cases: first every open entry a changed Case holds now, then the ones it held.
	for id := range t.cases {
		if c, ok := b.cases[id]; ok && c.Status != contract.CaseClosed && b.open[openKey(c)] == id {
			delete(b.open, openKey(c))
		}
	}
	for id, before := range t.cases {
		if before == nil {
			delete(b.cases, id)
			continue
		}
		b.cases[id] = before
		if before.Status != contract.CaseClosed {
			b.open[openKey(before)] = id
		}
	}
	b.caseSeq = b.caseSeq[:t.caseSeq]
	return true
}

// keepNodes records, for each node t touched that the record has not seen, its record
// before t. Called when t commits.
func (r *Tentative) keepNodes(t *txn) {
	for _, id := range t.touched {
		if _, seen := r.nodes[id]; seen {
			continue
		}
		if r.nodes == nil {
			r.nodes = map[string]*contract.Node{}
		}
		r.nodes[id] = t.before[id]
		r.order = append(r.order, id)
	}
}

// keepCase records Case id's record before the change about to be made to it, the first
// time the record sees it: called before every change of a Case.
func (b *Board) keepCase(id contract.CaseID) {
	r := b.tentative
	if r == nil {
		return
	}
	if _, seen := r.cases[id]; seen {
		return
	}
	if r.cases == nil {
		r.cases = map[contract.CaseID]*contract.Case{}
	}
	var before *contract.Case
	if c, ok := b.cases[id]; ok {
		cp := caseCopy(c)
		before = &cp
	}
	r.cases[id] = before
}
