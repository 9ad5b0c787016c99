package engine_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// TestAssert_OneFactAllocates: asserting one fact of one argument, as the Board does a
// fact at a time, allocates what the fact takes, not blocks sized for thousands: the
// value ids' scratch block of 1,024 (4 KB a fact, most of what an ApplyBatch of ten
// allocated in the engine: benchmarks/README.md, "ApplyBatch's answer"), and with
// Deltas on the Delta's block of 4,096 arguments (≈ 300 KB a fact, which the Delta
// keeps); and not seven maps a fact for a mutation's bookkeeping, most of them unused.
func TestAssert_OneFactAllocates(t *testing.T) {
	for _, deltas := range []bool{false, true} {
		t.Run(fmt.Sprintf("deltas %v", deltas), func(t *testing.T) { assertOneAllocates(t, deltas) })
	}
}

// assertOneAllocates is TestAssert_OneFactAllocates on an engine that reports its
// Deltas or not (the Board does not; a fact's Delta holds its arguments).
func assertOneAllocates(t *testing.T, deltas bool) {
	e := engine.New(engine.Limits{})
	e.SetDeltas(deltas)
	const n = 500
	facts := make([]engine.Fact, n)
	for i := range facts {
		facts[i] = engine.Fact{ID: fmt.Sprintf("f%d", i), Atom: at("item", "n", i), Tier: contract.TierAsserted}
	}
	for _, f := range facts[:n/2] { // the Board's tables and maps grown first
		if _, err := e.Assert(f); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, f := range facts[n/2:] {
		if _, err := e.Assert(f); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	allocs := (after.Mallocs - before.Mallocs) / (n / 2)
	t.Logf("%d allocations a fact", allocs)
	if allocs > 16 {
		t.Errorf("asserting one fact of one argument allocates %d times, want at most 16", allocs)
	}
	per := (after.TotalAlloc - before.TotalAlloc) / (n / 2)
	t.Logf("%d bytes a fact", per)
	if per > 2048 {
		t.Errorf("asserting one fact of one argument allocates %d bytes, want at most 2048", per)
	}
}
