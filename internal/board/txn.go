package board

import (
	"fmt"
	"slices"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// txn applies a sequence of node changes all-or-nothing. Each engine mutation is itself
// all-or-nothing; txn records how to undo every step that succeeded and, on a later
// failure, undoes them in reverse so the Board is exactly as it was. On success it reports
// the net changes the authority persists.
type txn struct {
	b       *Board
	seq0    uint64
	recent0 int
	undo    []func() error
	touched []string
	before  map[string]*contract.Node // a node's record before the txn; nil when it did not exist
}

func (b *Board) begin() *txn {
	return &txn{b: b, seq0: b.seq, recent0: len(b.recent), before: map[string]*contract.Node{}}
}

func (t *txn) touch(id string) {
	if _, seen := t.before[id]; seen {
		return
	}
	t.touched = append(t.touched, id)
	if n, ok := t.b.nodes[id]; ok {
		rec := n.rec
		t.before[id] = &rec
	} else {
		t.before[id] = nil
	}
}

// add puts n on the Board: a fact into the engine, a rule into the program, a goal aside.
func (t *txn) add(n *node) error {
	id := n.rec.NodeID
	if _, ok := t.b.nodes[id]; ok {
		return nodeConflict(id)
	}
	switch n.rec.Kind {
	case contract.NodeFact:
		seq := n.rec.Seq
		if seq == 0 {
			seq = t.b.seq + 1 // the Seq addNode gives it below
		}
		if _, err := t.b.eng.Assert(engine.Fact{ID: id, Atom: n.atom, Tier: n.rec.Tier, Seq: seq}); err != nil {
			return err
		}
		t.undo = append(t.undo, func() error { _, err := t.b.eng.Retract(id); return err })
	case contract.NodeRule:
		if _, err := t.b.eng.AddRules(*n.rule); err != nil {
			return err
		}
		t.undo = append(t.undo, func() error { _, err := t.b.eng.RemoveRules(id); return err })
	}
	t.touch(id)
	t.b.addNode(n)
	t.undo = append(t.undo, func() error { delete(t.b.nodes, id); return nil })
	return nil
}

func nodeConflict(id string) error {
	return contract.Errorf(contract.CodeNodeConflict, "the node id %q is already on the Board; choose another or leave nodeId out", id)
}

// addQuiet puts the nodes of quiet steps ([Board.quiet]) on the Board in order, as
// [Board.addOnce] and add put them one by one, with their facts asserted in one engine
// mutation, and writes each step's node id into ids.
func (t *txn) addQuiet(steps []step, ids []string) error {
	var facts []engine.Fact
	added := make([]string, 0, len(steps))
	// Undone after the engine's mutation, which is undone first: the rollback runs
	// backwards.
	t.undo = append(t.undo, func() error {
		for _, id := range added {
			delete(t.b.nodes, id)
		}
		return nil
	})
	for k, s := range steps {
		n := s.node
		id := n.rec.NodeID
		ids[k] = id
		if old, ok := t.b.nodes[id]; ok {
			if s.generated && old.rec.Kind == n.rec.Kind {
				continue // the same content, asserted again: done, as addOnce does
			}
			return nodeConflict(id)
		}
		t.touch(id)
		t.b.addNode(n)
		added = append(added, id)
		if n.rec.Kind == contract.NodeFact {
			if facts == nil {
				facts = make([]engine.Fact, 0, len(steps)-k)
			}
			facts = append(facts, engine.Fact{ID: id, Atom: n.atom, Tier: n.rec.Tier, Seq: n.rec.Seq})
		}
	}
	if len(facts) == 0 {
		return nil
	}
	if _, err := t.b.eng.Assert(facts...); err != nil {
		return err
	}
	t.undo = append(t.undo, func() error {
		retract := make([]string, len(facts))
		for i, f := range facts {
			retract[i] = f.ID
		}
		_, err := t.b.eng.Retract(retract...)
		return err
	})
	return nil
}

// remove takes the node id off the Board; the engine removes what rested only on it.
func (t *txn) remove(id string) error {
	n, ok := t.b.nodes[id]
	if !ok {
		return contract.Errorf(contract.CodeNodeNotFound, "no node %q is on the Board; check the id in the View", id)
	}
	switch n.rec.Kind {
	case contract.NodeFact:
		if _, err := t.b.eng.Retract(id); err != nil {
			return err
		}
		t.undo = append(t.undo, func() error {
			_, err := t.b.eng.Assert(engine.Fact{ID: id, Atom: n.atom, Tier: n.rec.Tier, Seq: n.rec.Seq})
			return err
		})
	case contract.NodeRule:
		if _, err := t.b.eng.RemoveRules(id); err != nil {
			return err
		}
		t.undo = append(t.undo, func() error { _, err := t.b.eng.AddRules(*n.rule); return err })
	}
	t.touch(id)
	delete(t.b.nodes, id)
	t.undo = append(t.undo, func() error { t.b.nodes[id] = n; return nil })
	return nil
}

// rollback undoes every step in reverse. An undo that fails means the engine broke its
// all-or-nothing contract; the Board cannot continue in an unknown state.
func (t *txn) rollback() {
	for _, u := range slices.Backward(t.undo) {
		if err := u(); err != nil {
			panic(fmt.Sprintf("board: undo failed, engine state unknown: %v", err))
		}
	}
	t.b.seq = t.seq0
	t.b.recent = t.b.recent[:t.recent0]
}

// commit returns the net changes: a put for each node that exists now (and is new or
// changed), a delete for each that existed before and does not now.
func (t *txn) commit() []contract.NodeChange {
	if t.b.tentative != nil {
		t.b.tentative.keepNodes(t)
	}
	var out []contract.NodeChange
	for _, id := range t.touched {
		before := t.before[id]
		n, now := t.b.nodes[id]
		switch {
		case now && (before == nil || before.Seq != n.rec.Seq):
			rec := n.rec
			out = append(out, contract.NodeChange{Put: &rec})
		case !now && before != nil:
			out = append(out, contract.NodeChange{Delete: id})
		}
	}
	for _, id := range t.touched {
		if _, ok := t.b.nodes[id]; !ok {
			t.b.dropNode(id)
		}
	}
	return out
}
