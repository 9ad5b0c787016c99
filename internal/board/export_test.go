package board

import "github.com/docketrun/docket/internal/contract"

// ApplyBatchStepwise is ApplyBatch with every operation applied by an engine mutation of
// its own, as ApplyBatch applied them before it asserted quiet facts together: the oracle
// of TestBoard_ApplyBatchGroupedAsStepwise.
func (b *Board) ApplyBatchStepwise(by Author, batch contract.Batch) (BatchResult, error) {
	return b.applyBatch(by, batch, applyStepwise)
}

// ApplyBatchGroupedOnly is ApplyBatch without its second run, a step at a time, of a
// batch the grouped run refused: a test sees with it that the grouped run refuses only
// what the oracle refuses.
func (b *Board) ApplyBatchGroupedOnly(by Author, batch contract.Batch) (BatchResult, error) {
	return b.applyBatch(by, batch, applyGroupedOnly)
}
