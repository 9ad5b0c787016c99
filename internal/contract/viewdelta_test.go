package contract_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

func fact(id string) contract.Node {
	return contract.Node{NodeID: id, Kind: contract.NodeFact, CreatedBy: "agent:a", Tier: contract.TierAsserted,
		Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": contract.StringValue(id)}}}
}

func nodes(ids ...string) contract.Bounded[contract.Node] {
	b := contract.Bounded[contract.Node]{Items: []contract.Node{}}
	for _, id := range ids {
		b.Items = append(b.Items, fact(id))
	}
	return b
}

// TestViewDelta_Apply: a delta applied to the View it was made from gives the new View,
// entry for entry and in order; one that does not fit the View is refused.
func TestViewDelta_Apply(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	ready := contract.ActionEntry{Name: "note", State: contract.ActionReady, Params: []contract.ParamEntry{}, Bound: []string{}}
	blocked := ready
	blocked.State, blocked.Reason = contract.ActionBlocked, contract.BlockRule
	inCase := ready
	inCase.CaseID = "case-1"
	base := contract.View{Position: contract.Position{Writes: contract.PositionOpen}, Nodes: nodes("c", "b", "a"),
		Actions: contract.Bounded[contract.ActionEntry]{Items: []contract.ActionEntry{ready, inCase}}}
	with := func(f func(*contract.View)) contract.View {
		v := base
		v.Nodes.Items = append([]contract.Node(nil), base.Nodes.Items...)
		v.Actions.Items = append([]contract.ActionEntry(nil), base.Actions.Items...)
		f(&v)
		return v
	}
	tests := []struct {
		name    string
		delta   contract.ViewDelta
		want    contract.View
		wantErr bool
	}{
		{"nothing changed", contract.ViewDelta{}, base, false},
		{"newest nodes in, oldest out", contract.ViewDelta{Nodes: contract.ListDelta[contract.Node]{Removed: []string{"a"},
			Added: []contract.Placed[contract.Node]{{At: 0, Item: fact("e")}, {At: 1, Item: fact("d")}}, Truncated: &yes}},
			with(func(v *contract.View) { v.Nodes = nodes("e", "d", "c", "b"); v.Nodes.Truncated = true }), false},
		{"an entry in the middle replaced", contract.ViewDelta{Nodes: contract.ListDelta[contract.Node]{Removed: []string{"b"},
			Added: []contract.Placed[contract.Node]{{At: 1, Item: fact("x")}}}},
			with(func(v *contract.View) { v.Nodes = nodes("c", "x", "a") }), false},
		{"added at the end", contract.ViewDelta{Nodes: contract.ListDelta[contract.Node]{
			Added: []contract.Placed[contract.Node]{{At: 3, Item: fact("z")}}}},
			with(func(v *contract.View) { v.Nodes = nodes("c", "b", "a", "z") }), false},
		{"every node removed keeps the list's form", contract.ViewDelta{Nodes: contract.ListDelta[contract.Node]{Removed: []string{"a", "b", "c"}}},
			with(func(v *contract.View) { v.Nodes = nodes() }), false},
		{"an Action keyed by name and Case changed state", contract.ViewDelta{Actions: contract.ListDelta[contract.ActionEntry]{Removed: []string{"note"},
			Added: []contract.Placed[contract.ActionEntry]{{At: 0, Item: blocked}}}},
			with(func(v *contract.View) { v.Actions.Items[0] = blocked }), false},
		{"the Action of a Case", contract.ViewDelta{Actions: contract.ListDelta[contract.ActionEntry]{Removed: []string{"note@case-1"}}},
			with(func(v *contract.View) { v.Actions.Items = v.Actions.Items[:1] }), false},
		{"position and truncated only", contract.ViewDelta{Position: &contract.Position{Writes: "closed"},
			Nodes: contract.ListDelta[contract.Node]{Truncated: &no}},
			with(func(v *contract.View) { v.Position.Writes = "closed" }), false},
		{"removes a node the View does not hold", contract.ViewDelta{Nodes: contract.ListDelta[contract.Node]{Removed: []string{"q"}}}, contract.View{}, true},
		{"adds past the end", contract.ViewDelta{Nodes: contract.ListDelta[contract.Node]{
			Added: []contract.Placed[contract.Node]{{At: 5, Item: fact("z")}}}}, contract.View{}, true},
		{"adds out of order", contract.ViewDelta{Nodes: contract.ListDelta[contract.Node]{
			Added: []contract.Placed[contract.Node]{{At: 2, Item: fact("y")}, {At: 0, Item: fact("z")}}}}, contract.View{}, true},
		{"decisions in a View that lists none", contract.ViewDelta{Decisions: contract.ListDelta[contract.DecidableRequest]{
			Removed: []string{"req_1"}}}, contract.View{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.delta.Apply(base)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Apply = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, valueEqual); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
			// What a client checks: the View it made has the digest of the one it stands for.
			wd, err := contract.ViewDigest(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if gd, err := contract.ViewDigest(got); err != nil || gd != wd {
				t.Errorf("ViewDigest(applied) = %v (%v), want %v", gd, err, wd)
			}
		})
	}
	if len(base.Nodes.Items) != 3 || base.Nodes.Items[0].NodeID != "c" {
		t.Errorf("Apply wrote the held View's lists: %+v", base.Nodes.Items)
	}
}
