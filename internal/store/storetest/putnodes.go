package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

// putNodesBatch returns the nodes of testPutNodes: 150 of them, more than two of the
// store's chunks of rows, of several kinds, one without data, some replacing a node
// earlier in the batch, within its chunk and across chunks (the last ten replace n000–n009
// of the first chunk, which replace the rows n000 and n005 stored before).
func putNodesBatch() []store.Node {
	kinds := []string{"fact", "rule", "goal"}
	var ns []store.Node
	for i := range 150 {
		id := fmt.Sprintf("n%03d", i)
		switch {
		case i%17 == 16:
			id = fmt.Sprintf("n%03d", i-3) // replaces a node of the same chunk
		case i >= 140:
			id = fmt.Sprintf("n%03d", i-140) // replaces one of the first chunk
		}
		data := json.RawMessage(fmt.Sprintf(`{"i":%d,"text":"node %d"}`, i, i))
		if i == 42 {
			data = nil
		}
		ns = append(ns, store.Node{ID: id, Kind: kinds[i%len(kinds)], Data: data})
	}
	return ns
}

// testPutNodes checks that PutNodes leaves the rows that PutNode of each node, in order,
// leaves, read back alike inside the transaction and after it, and that a PutNodes the
// store refuses writes none of its nodes.
func testPutNodes(t *testing.T, h Harness) {
	batched, single := open(t, h), open(t, h)
	stored := []store.Node{
		{ID: "n000", Kind: "fact", Data: json.RawMessage(`{"stored":0}`)},
		{ID: "n005", Kind: "goal", Data: json.RawMessage(`{"stored":5}`)},
		{ID: "kept", Kind: "rule", Data: json.RawMessage(`{"stored":"kept"}`)},
	}
	for _, s := range []store.Store{batched, single} {
		seedProject(t, s)
		update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutNodes(ctx, "p1", stored) })
	}
	ns := putNodesBatch()
	var inTx []store.Node
	update(t, batched, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutNodes(ctx, "p1", ns); err != nil {
			return err
		}
		var err error
		inTx, err = tx.Nodes(ctx, "p1")
		return err
	})
	update(t, single, func(ctx context.Context, tx store.Tx) error {
		for _, n := range ns {
			if err := tx.PutNode(ctx, "p1", n); err != nil {
				return err
			}
		}
		return nil
	})
	want := allNodes(t, single)
	if len(want) != 1+150-8-10 { // kept, and 150 less the 8 in-chunk and 10 cross-chunk replacements
		t.Fatalf("PutNode of each node left %d rows; the test's batch is not what it says", len(want))
	}
	if diff := cmp.Diff(want, allNodes(t, batched)); diff != "" {
		t.Fatalf("the rows after PutNodes differ from the rows after PutNode of each (-putnode +putnodes):\n%s", diff)
	}
	if diff := cmp.Diff(want, inTx); diff != "" {
		t.Fatalf("the rows PutNodes' own transaction reads differ (-putnode +in tx):\n%s", diff)
	}
	for _, s := range []store.Store{batched, single} {
		if n, err := s.NodeCount(t.Context(), "p1"); err != nil || n != len(want) {
			t.Errorf("NodeCount = %d, %v; want %d", n, err, len(want))
		}
	}
	t.Run("empty", func(t *testing.T) {
		update(t, batched, func(ctx context.Context, tx store.Tx) error { return tx.PutNodes(ctx, "p1", nil) })
		if diff := cmp.Diff(want, allNodes(t, batched)); diff != "" {
			t.Fatalf("the rows after an empty PutNodes (-before +after):\n%s", diff)
		}
	})

	edit := func(i int, f func(*store.Node)) []store.Node {
		ns := putNodesBatch()
		f(&ns[i])
		return ns
	}
	tests := []struct {
		name    string
		project string
		ns      []store.Node
		want    error
	}{
		{"missing project", "nope", putNodesBatch(), store.ErrNotFound},
		{"no project", "", putNodesBatch(), store.ErrInvalid},
		{"data not JSON in the last chunk", "p1", edit(140, func(n *store.Node) { n.Data = json.RawMessage(`{`) }), store.ErrInvalid},
		{"no kind in the second chunk", "p1", edit(70, func(n *store.Node) { n.Kind = "" }), store.ErrInvalid},
		{"no id", "p1", edit(100, func(n *store.Node) { n.ID = "" }), store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var during []store.Node
			err := updateErr(t, batched, func(ctx context.Context, tx store.Tx) error {
				err := tx.PutNodes(ctx, tt.project, tt.ns)
				if tt.want == store.ErrInvalid {
					// Nothing was written before the refusal, in the transaction either.
					var rerr error
					if during, rerr = tx.Nodes(ctx, "p1"); rerr != nil {
						return rerr
					}
				}
				return err
			})
			wantErr(t, "PutNodes", err, tt.want)
			if during != nil {
				if diff := cmp.Diff(want, during); diff != "" {
					t.Fatalf("a refused PutNodes wrote rows in its transaction (-before +during):\n%s", diff)
				}
			}
			if diff := cmp.Diff(want, allNodes(t, batched)); diff != "" {
				t.Fatalf("the rows after a refused PutNodes (-before +after):\n%s", diff)
			}
		})
	}
}

// allNodes returns the node rows of p1 in s.
func allNodes(t *testing.T, s store.Store) []store.Node {
	t.Helper()
	ns, err := s.Nodes(t.Context(), "p1")
	if err != nil {
		t.Fatalf("Nodes: %v", err)
	}
	return ns
}
