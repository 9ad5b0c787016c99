package board_test

import (
	"fmt"
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// TestBoard_ApplyBatchQuietFactsAllocate: a batch of ten facts no rule reads (the
// ApplyBatch benchmark's, benchmarks/README.md, "ApplyBatch's answer") is asserted in one
// engine mutation, not ten each with its own bookkeeping and fixpoint, with its undo kept
// as one step, not two a fact: 348 allocations a batch of ten became 249. The rest is
// each operation's own: its atom checked, its id minted, its wire record.
func TestBoard_ApplyBatchQuietFactsAllocate(t *testing.T) {
	measure := func(apply func(b *board.Board, by board.Author, batch contract.Batch) (board.BatchResult, error)) float64 {
		b := newCalcBoard(t)
		const runs = 200
		batches := make([]contract.Batch, runs+1) // AllocsPerRun runs once more, first
		for i := range batches {
			for j := range 10 {
				batches[i].Operations = append(batches[i].Operations,
					assertFact(&contract.Atom{Predicate: "item", Args: contract.Args{"n": str(fmt.Sprint(10*i + j))}}))
			}
		}
		i := 0
		return testing.AllocsPerRun(runs, func() {
			if _, err := apply(b, member, batches[i]); err != nil {
				t.Fatal(err)
			}
			i++
		})
	}
	grouped, stepwise := measure((*board.Board).ApplyBatch), measure((*board.Board).ApplyBatchStepwise)
	t.Logf("a batch of ten quiet facts: %.0f allocations, %.0f a mutation a fact", grouped, stepwise)
	if grouped > 270 {
		t.Errorf("a batch of ten quiet facts allocates %.0f times (%.0f with a mutation a fact), want at most 270", grouped, stepwise)
	}
}
