package board_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// TestBoard_ViewNodesAllocates: the View's node list is made at its bound at once. Grown
// by appends, a View of 20 nodes allocated room for 63 (≈ 7 KB more a View, and every
// ApplyBatch's answer builds one: benchmarks/README.md, "ApplyBatch's answer").
func TestBoard_ViewNodesAllocates(t *testing.T) {
	b := newCalcBoard(t)
	for i := range 40 {
		apply(t, b, agent, assertFact(&contract.Atom{Predicate: "item", Args: contract.Args{"n": str(fmt.Sprint(i))}}))
	}
	req := board.ViewRequest{Principal: agent.Principal}
	if n := len(b.View(req).Nodes.Items); n != board.ViewMaxNodes {
		t.Fatalf("the View lists %d nodes, want %d", n, board.ViewMaxNodes)
	}
	const runs = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		b.View(req)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 9000 {
		t.Errorf("a View of %d nodes allocates %d bytes, want at most 9000", board.ViewMaxNodes, per)
	}
}
