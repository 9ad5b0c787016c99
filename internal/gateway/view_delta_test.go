package gateway_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// deltaMeta is the _meta of a call in conversation a from a client that applies View
// deltas and holds the View with digest held.
func deltaMeta(held contract.Digest) mcp.Meta {
	return mcp.Meta{contract.MetaConversationKey: "a", contract.MetaViewKey: held.String(), contract.MetaViewDeltaKey: true}
}

// assertTen is an ApplyBatch of ten item facts from n.
func assertTen(n int) contract.Batch {
	var in contract.Batch
	for i := range 10 {
		in.Operations = append(in.Operations, contract.Operation{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str(string(rune('a'+n)) + string(rune('a'+i)))}}})
	}
	return in
}

// TestGateway_ViewSentAsDelta: to a client that says it applies View deltas, a changed
// View is sent as what changed from the View its conversation holds, and that delta
// applied to it is exactly the View the gateway would have sent whole (the digest it
// names, the View QueryBoard fullView sends). Any client that did not say so, or holds
// no View the gateway indexed, is sent the View in full as before. Every case starts
// from conversation a holding a View sent in full, after three batches.
func TestGateway_ViewSentAsDelta(t *testing.T) {
	cases := []struct {
		name      string
		meta      func(held contract.Digest) mcp.Meta
		wantDelta bool
		fullView  bool // the Board changes in another conversation, then a asks QueryBoard for the View in full
	}{
		{"a client that applies deltas", deltaMeta, true, false},
		{"a client that does not say it does", func(held contract.Digest) mcp.Meta {
			return mcp.Meta{contract.MetaConversationKey: "a", contract.MetaViewKey: held.String()}
		}, false, false},
		{"a client that says it does not", func(held contract.Digest) mcp.Meta {
			m := deltaMeta(held)
			m[contract.MetaViewDeltaKey] = false
			return m
		}, false, false},
		{"a client that holds no View", func(contract.Digest) mcp.Meta { return deltaMeta(contract.Digest{}) }, false, false},
		{"a client that holds another View", func(contract.Digest) mcp.Meta { return deltaMeta(contract.Sum([]byte("other"))) }, false, false},
		{"another conversation", func(held contract.Digest) mcp.Meta {
			m := deltaMeta(held)
			m[contract.MetaConversationKey] = "b"
			return m
		}, false, false},
		{"QueryBoard asks for the View in full", deltaMeta, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, time.Second)
			cs := f.connect(t, nil)
			for n := range 3 {
				if res, _ := callMeta(t, cs, deltaMeta(contract.Digest{}), "ApplyBatch", assertTen(n)); !res.Accepted {
					t.Fatalf("ApplyBatch = %s %s", res.ErrorCode, res.Teaching)
				}
			}
			held, meta := callMeta(t, cs, deltaMeta(contract.Digest{}), "QueryBoard", contract.QueryBoardInput{})
			if held.ViewDelta != nil || held.ViewUnchanged != (contract.Digest{}) {
				t.Fatal("a client that holds no View was not sent it in full")
			}
			var res contract.ToolResult
			var got contract.HostMeta
			if tc.fullView {
				if b, _ := callMeta(t, cs, mcp.Meta{contract.MetaConversationKey: "b"}, "ApplyBatch", assertTen(3)); !b.Accepted {
					t.Fatalf("ApplyBatch in b = %s %s", b.ErrorCode, b.Teaching)
				}
				res, got = callMeta(t, cs, tc.meta(meta.ViewDigest), "QueryBoard", contract.QueryBoardInput{FullView: true})
			} else {
				res, got = callMeta(t, cs, tc.meta(meta.ViewDigest), "ApplyBatch", assertTen(3))
			}
			if !res.Accepted {
				t.Fatalf("ApplyBatch = %s %s", res.ErrorCode, res.Teaching)
			}
			full, fullMeta := callMeta(t, cs, mcp.Meta{contract.MetaConversationKey: "a"}, "QueryBoard", contract.QueryBoardInput{FullView: true})
			if fullMeta.ViewDigest != got.ViewDigest {
				t.Fatalf("the View changed between ApplyBatch and QueryBoard: %v, then %v", got.ViewDigest, fullMeta.ViewDigest)
			}
			if !tc.wantDelta {
				if res.ViewDelta != nil || res.ViewUnchanged != (contract.Digest{}) {
					t.Fatalf("viewDelta %+v, viewUnchanged %v; want the View in full", res.ViewDelta, res.ViewUnchanged)
				}
				if d, err := contract.ViewDigest(res.View); err != nil || d != got.ViewDigest {
					t.Errorf("the View sent has digest %v (%v), want %v", d, err, got.ViewDigest)
				}
				return
			}
			if res.ViewDelta == nil {
				t.Fatal("a changed View was sent in full to a client that applies deltas")
			}
			if res.ViewDelta.From != meta.ViewDigest {
				t.Errorf("delta from %v, want the held View's %v", res.ViewDelta.From, meta.ViewDigest)
			}
			if d, err := contract.ViewDigest(res.View); err == nil && d == got.ViewDigest {
				t.Error("the answer carries the View as well as its delta")
			}
			if len(res.ViewDelta.Nodes.Added) != 10 || len(res.ViewDelta.Nodes.Removed) != 10 {
				t.Errorf("nodes: %d added, %d removed; want the ten facts in and ten out", len(res.ViewDelta.Nodes.Added), len(res.ViewDelta.Nodes.Removed))
			}
			applied, err := res.ViewDelta.Apply(held.View)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if d, err := contract.ViewDigest(applied); err != nil || d != got.ViewDigest {
				t.Errorf("the applied View's digest is %v (%v), want the one the answer names, %v", d, err, got.ViewDigest)
			}
			if diff := cmp.Diff(full.View, applied, cmp.Comparer(func(a, b contract.Value) bool { return a == b })); diff != "" {
				t.Errorf("the applied View is not the one sent in full (-full +applied):\n%s", diff)
			}
			// The conversation now holds the new View: unchanged is still named unchanged.
			again, _ := callMeta(t, cs, deltaMeta(got.ViewDigest), "QueryBoard", contract.QueryBoardInput{})
			if again.ViewUnchanged != got.ViewDigest {
				t.Errorf("viewUnchanged %v after the delta, want %v", again.ViewUnchanged, got.ViewDigest)
			}
		})
	}
}

// TestGateway_ViewDeltaClaimMalformed: a _meta["docket/viewDelta"] that is not a boolean
// is refused, as a malformed View digest is.
func TestGateway_ViewDeltaClaimMalformed(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	for _, v := range []any{"true", 1} {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "QueryBoard", Arguments: []byte(`{}`),
			Meta: mcp.Meta{contract.MetaViewDeltaKey: v}})
		if err == nil {
			t.Errorf("QueryBoard with _meta viewDelta %v answered, want refused", v)
		}
	}
}
