package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/docketrun/docket/internal/store"
)

// BenchData is the event data the append benchmarks write: a small JSON object of the size
// a typical Board or operation event carries (~100 bytes).
var BenchData = []byte(`{"op":"assert_fact","node":"n-000042","predicate":"calculation_input","args":{"job_id":"calc-001","quantity":2}}`)

// BenchAppend measures [store.Tx.Append] in transactions of perTx events each, on s, and
// reports events/s. Run it beside the implementation's raw INSERT benchmark: the ratio of
// the two in the same run is the figure that matters (see /work/shared/floors).
func BenchAppend(b *testing.B, s store.Store, perTx int) {
	b.Helper()
	ctx := context.Background()
	project := fmt.Sprintf("bench-%d", perTx)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		err := s.Update(ctx, func(tx store.Tx) error {
			for range perTx {
				n++
				_, err := tx.Append(ctx, store.NewEvent{
					Project: project, ID: fmt.Sprintf("e%d", n), Type: "board.asserted",
					At: t0, Actor: "agent:calc", Data: BenchData,
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("Update: %v", err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}
