package gateway_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/contract"
)

// TestGateway_ApplyBatchWritesNodesInOneCall: an ApplyBatch of ten facts writes its ten
// nodes with one store call (Tx.PutNodes), not one each, in its one transaction, and the
// node table it leaves is what the log records (boards.CheckProjection), through a batch
// that retracts and revises too, whose deletes come between its puts.
func TestGateway_ApplyBatchWritesNodesInOneCall(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	fact := func(id string, n int) contract.Operation {
		return contract.Operation{Op: contract.OpAssertFact, NodeID: id,
			Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str(fmt.Sprint(n))}}}
	}
	batch := func(from int) contract.Batch {
		var in contract.Batch
		for j := from; j < from+10; j++ {
			in.Operations = append(in.Operations, fact(fmt.Sprintf("it-%d", j), j))
		}
		return in
	}
	if res, _ := call(t, cs, "ApplyBatch", batch(0)); !res.Accepted {
		t.Fatalf("ApplyBatch = %+v, want accepted", res)
	}
	f.count.Reset()
	if res, _ := call(t, cs, "ApplyBatch", batch(10)); !res.Accepted {
		t.Fatalf("ApplyBatch = %+v, want accepted", res)
	}
	c := f.count.Counts()
	if c.ByMethod["Tx.PutNodes"] != 1 || c.ByMethod["Tx.PutNode"] != 0 || c.Txs != 1 {
		t.Errorf("an ApplyBatch of ten facts made %d Tx.PutNodes and %d Tx.PutNode calls in %d transactions (%v); want one Tx.PutNodes in one transaction",
			c.ByMethod["Tx.PutNodes"], c.ByMethod["Tx.PutNode"], c.Txs, c.ByMethod)
	}
	// It made 14 when each node was written with a call of its own: the head, the
	// transaction, its head lock, ten nodes and the events (benchmarks/README.md,
	// "ApplyBatch's answer").
	if c.Calls > 5 {
		t.Errorf("an ApplyBatch of ten facts made %d store calls (%v); want at most 5", c.Calls, c.ByMethod)
	}
	if err := boards.CheckProjection(t.Context(), f.st, "default"); err != nil {
		t.Fatalf("the node table after ApplyBatch: %v", err)
	}

	mixed := contract.Batch{Operations: []contract.Operation{
		fact("it-20", 20),
		{Op: contract.OpRetractNode, NodeID: "it-3"},
		fact("it-21", 21),
		{Op: contract.OpReviseFact, NodeID: "it-5", Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str("5b")}}},
		fact("it-22", 22),
	}}
	f.count.Reset()
	if res, _ := call(t, cs, "ApplyBatch", mixed); !res.Accepted {
		t.Fatalf("ApplyBatch = %+v, want accepted", res)
	}
	c = f.count.Counts()
	if c.ByMethod["Tx.PutNodes"] != 3 || c.ByMethod["Tx.DeleteNode"] != 2 || c.ByMethod["Tx.PutNode"] != 0 {
		t.Errorf("a batch of put, delete, put, delete and put, put made %v; want 3 Tx.PutNodes and 2 Tx.DeleteNode", c.ByMethod)
	}
	if err := boards.CheckProjection(t.Context(), f.st, "default"); err != nil {
		t.Fatalf("the node table after a batch that deletes: %v", err)
	}
	rows, err := f.st.Nodes(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r.ID] = true
	}
	for id, want := range map[string]bool{"it-3": false, "it-5": false, "it-4": true, "it-19": true, "it-20": true, "it-21": true, "it-22": true} {
		if have[id] != want {
			t.Errorf("node %s stored = %v, want %v", id, have[id], want)
		}
	}
}
