package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// BenchmarkQueryBoard_View is BenchmarkQueryBoard asking for the View alone, the read
// an Agent polls the Board with: answered from what the Board cache published of the
// committed Board when it covers the head the call read, not under the Board's lock
// (docs/architecture.md, "The project state and its driver").
func BenchmarkQueryBoard_View(b *testing.B) {
	f := newFixture(b, time.Second)
	cs := f.connect(b, nil)
	fillItems(b, cs)
	p := &mcp.CallToolParams{Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}
	countedLoop(b, f, func(int) {
		res, err := cs.CallTool(b.Context(), p)
		if err != nil || res.IsError {
			b.Fatalf("QueryBoard failed: %v", err)
		}
	})
}

// BenchmarkQueryBoard_ViewDuringWrites is BenchmarkQueryBoard_View while another Agent
// of the project sends one ApplyBatch after another, each holding the project's Board
// lock across its store transaction: the p50 and p90 of the polling Agent's QueryBoard,
// which waited for that lock before the Board cache published its committed Board.
func BenchmarkQueryBoard_ViewDuringWrites(b *testing.B) {
	f := newBenchFixture(b, time.Second, nil)
	cs := f.connect(b, nil)
	fillItems(b, cs)
	tok, err := f.a.Directory().CreateAgent(b.Context(), f.admin, "default", contract.CreateAgentRequest{Name: "writer"})
	if err != nil {
		b.Fatal(err)
	}
	ws := f.connectAs(b, tok.Token, nil)
	ctx, cancel := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	writes := 0
	wg.Go(func() {
		for ; ctx.Err() == nil; writes++ {
			in := contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "written", Args: contract.Args{"n": str(fmt.Sprint(writes))}}}}}
			res, err := callErr(ws, "ApplyBatch", in)
			if err != nil || res.IsError {
				b.Errorf("ApplyBatch failed: %v", err)
				return
			}
		}
	})
	defer func() {
		cancel()
		wg.Wait()
		b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
	}()
	p := &mcp.CallToolParams{Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := cs.CallTool(b.Context(), p)
		if err != nil || res.IsError {
			b.Fatalf("QueryBoard failed: %v", err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*9/10].Nanoseconds()), "p90-ns")
}
