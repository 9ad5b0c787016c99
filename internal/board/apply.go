package board

import (
	"cmp"
	"slices"

	"github.com/docketrun/docket/internal/contract"
)

// Apply applies one Board change as another Board made it and the authority recorded it
// (docs/architecture.md, "The project state and its driver"): puts are the node records
// the change left new or changed, deleted the ids of the nodes it removed, cases the Case
// records it changed, as the Board calls return them ([contract.NodeChange], a Case).
// A Board that held what the other held before the change then holds what it held after
// it: the same nodes with the same ids and Seqs, the same Cases, the same derivations,
// as [Restore] from the records would give. A put of a node the Board holds replaces it.
//
// It is all-or-nothing, like every mutation: a record that does not convert, a delete
// of a node the Board lacks, a put of a capability node or a Case whose root is not on
// the Board refuses the whole change and leaves the Board as it was. Such a refusal means
// the Board is not the one the change was made on; the caller builds it again.
func (b *Board) Apply(puts []contract.Node, deleted []string, cases []contract.Case) error {
	t := b.begin()
	err := b.applyNodes(t, puts, deleted)
	if err == nil {
		err = b.checkRoots(cases)
	}
	if err != nil {
		t.rollback()
		return err
	}
	t.commit()
	for i := range cases {
		c := caseCopy(&cases[i])
		if old, ok := b.cases[c.CaseID]; ok && old.Status != contract.CaseClosed {
			// A Case's type and key never change, so its entry in open is its own.
			delete(b.open, openKey(old))
		}
		b.putCase(&c)
	}
	return nil
}

// applyNodes removes the deleted nodes, then puts each record, replacing a node of the
// same id, in t. The puts go in Seq order, as Restore adds nodes: a change lists them in
// the order its call first touched them, and a node removed and put again in one call
// (an id chosen again) is newer than the ones put between, as the Board that made it
// holds it.
func (b *Board) applyNodes(t *txn, puts []contract.Node, deleted []string) error {
	for _, id := range deleted {
		if err := t.remove(id); err != nil {
			return err
		}
	}
	puts = slices.Clone(puts)
	slices.SortStableFunc(puts, func(x, y contract.Node) int { return cmp.Compare(x.Seq, y.Seq) })
	for _, rec := range puts {
		n, err := restoreNode(rec)
		if err != nil {
			return err
		}
		if _, ok := b.nodes[rec.NodeID]; ok {
			if err := t.remove(rec.NodeID); err != nil {
				return err
			}
		}
		if err := t.add(n); err != nil {
			return err
		}
	}
	return nil
}

// checkRoots refuses a Case whose root is not among the Board's nodes, as Restore does.
func (b *Board) checkRoots(cases []contract.Case) error {
	for _, c := range cases {
		if _, ok := b.nodes[c.Root]; !ok {
			return contract.Errorf(contract.CodeNodeNotFound, "Case %s names the root %s, which is not among the Board's nodes", c.CaseID, c.Root)
		}
	}
	return nil
}
