package mcpclient_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
	"github.com/docketrun/docket/internal/contract"
)

func viewOf(t *testing.T, nodes ...string) (contract.View, contract.Digest) {
	t.Helper()
	v := contract.View{Position: contract.Position{Writes: contract.PositionOpen},
		Nodes: contract.Bounded[contract.Node]{Items: []contract.Node{}}}
	for _, id := range nodes {
		v.Nodes.Items = append(v.Nodes.Items, contract.Node{NodeID: id, Kind: contract.NodeFact, Tier: contract.TierAsserted,
			Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue(id)}}})
	}
	d, err := contract.ViewDigest(v)
	if err != nil {
		t.Fatal(err)
	}
	return v, d
}

// TestClient_Call_ViewDelta: the client says it applies View deltas only when it holds
// the View its model holds; it shows the model a delta only when the delta, applied to
// that View, makes the View the answer names. Otherwise it asks for the View in full and
// shows that in the delta's place, and when even that fails it shows neither and claims
// no new View.
func TestClient_Call_ViewDelta(t *testing.T) {
	v0, d0 := viewOf(t, "n-1")
	v1, d1 := viewOf(t, "n-2", "n-1")
	_, other := viewOf(t, "n-9")
	good := &contract.ViewDelta{From: d0, Nodes: contract.ListDelta[contract.Node]{
		Added: []contract.Placed[contract.Node]{{At: 0, Item: v1.Nodes.Items[0]}}}}
	fromOther := *good
	fromOther.From = other
	tests := []struct {
		name string
		// answer is the ApplyBatch's reply; full the reply to the QueryBoard fullView the
		// client sends when it cannot apply the delta.
		answer, full gatewaytest.Reply
		wantShown    string // "delta", "full" or "none": how the answer shown carries the View
		wantDigest   contract.Digest
		wantFetch    bool
	}{
		{"the delta makes the View named", gatewaytest.Reply{ViewDelta: good, ViewDigest: d1}, gatewaytest.Reply{}, "delta", d1, false},
		{"the delta makes another View", gatewaytest.Reply{ViewDelta: good, ViewDigest: other},
			gatewaytest.Reply{View: v1, ViewDigest: d1}, "full", d1, true},
		{"a delta from a View not held", gatewaytest.Reply{ViewDelta: &fromOther, ViewDigest: d1},
			gatewaytest.Reply{View: v1, ViewDigest: d1}, "full", d1, true},
		{"a delta, and the View in full is not the one named", gatewaytest.Reply{ViewDelta: good, ViewDigest: other},
			gatewaytest.Reply{View: v1, ViewDigest: other}, "none", contract.Digest{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := gatewaytest.New(t)
			n := 0
			gw.Reply = func(gatewaytest.Call) gatewaytest.Reply {
				n++
				switch n {
				case 1:
					return gatewaytest.Reply{View: v0, ViewDigest: d0}
				case 2:
					return tt.answer
				}
				return tt.full
			}
			c := dial(t, gw)
			ctx := agent.WithConversation(t.Context(), "c-1")
			first, err := c.Call(agent.WithView(ctx, contract.Digest{}), "QueryBoard", json.RawMessage(`{}`))
			if err != nil || first.ViewDigest != d0 {
				t.Fatalf("QueryBoard = %+v, %v; want the View with digest %v", first, err, d0)
			}
			res, err := c.Call(agent.WithView(ctx, d0), "ApplyBatch", json.RawMessage(`{"operations":[]}`))
			if err != nil {
				t.Fatalf("ApplyBatch: %v", err)
			}
			calls := gw.Calls()
			if calls[0].Meta[contract.MetaViewDeltaKey] != nil {
				t.Errorf("the first call, holding no View, says it applies deltas: %v", calls[0].Meta)
			}
			if calls[1].Meta[contract.MetaViewDeltaKey] != true {
				t.Errorf("the call holding View %v does not say it applies deltas: %v", d0, calls[1].Meta)
			}
			fetched := len(calls) == 3 && calls[2].Tool == "QueryBoard" && string(calls[2].Args) == `{"fullView":true}` &&
				calls[2].Meta[contract.MetaViewKey] == "" && calls[2].Meta[contract.MetaConversationKey] == "c-1"
			if fetched != tt.wantFetch || len(calls) > 3 {
				t.Errorf("calls after ApplyBatch: %+v; want a QueryBoard fullView in c-1: %v", calls[2:], tt.wantFetch)
			}
			var shown contract.ToolResult
			if err := json.Unmarshal([]byte(res.Text), &shown); err != nil {
				t.Fatalf("shown %q: %v", res.Text, err)
			}
			got := "none"
			switch {
			case shown.ViewDelta != nil:
				got = "delta"
			case len(shown.View.Nodes.Items) > 0:
				got = "full"
				if diff := cmp.Diff(v1, shown.View, cmp.Comparer(func(a, b contract.Value) bool { return a == b })); diff != "" {
					t.Errorf("the View shown in the delta's place (-want +got):\n%s", diff)
				}
			}
			if got != tt.wantShown || res.ViewDigest != tt.wantDigest {
				t.Errorf("shown the View as %q with digest %v, want %q with %v\n%s", got, res.ViewDigest, tt.wantShown, tt.wantDigest, res.Text)
			}
			if !shown.Accepted || len(shown.Operations) == 0 {
				t.Errorf("the answer shown lost its outcome: %s", res.Text)
			}
		})
	}
}
