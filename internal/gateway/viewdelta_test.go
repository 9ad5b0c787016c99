package gateway_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/gateway"
)

func itemNode(n string) contract.Node {
	return contract.Node{NodeID: "n-" + n, Kind: contract.NodeFact, CreatedBy: "agent:agt_1", Tier: contract.TierAsserted,
		Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str(n)}}}
}

// testView is a View with every list filled, in the shapes the authority builds.
func testView(ids ...string) contract.View {
	v := contract.View{
		Position: contract.Position{Writes: contract.PositionOpen, NewCases: contract.PositionOpen, Rules: "rules <are> Case-local & bounded"},
		Cases: contract.Bounded[contract.CaseEntry]{Items: []contract.CaseEntry{{CaseID: "case-1", Root: "case-1:root",
			CaseType: "exploration", BusinessKey: contract.Args{"topic": str("a")}, Status: contract.CaseRunning}}},
		CaseTypes: contract.Bounded[contract.CaseTypeEntry]{Items: []contract.CaseTypeEntry{{Name: "exploration", KeyArgs: []string{"topic"}, Exploration: true}}},
		Roots: contract.Bounded[contract.RootEntry]{Items: []contract.RootEntry{{CaseID: "case-1", Root: "case-1:root",
			Gaps: contract.Bounded[string]{Items: []string{"done is not derived yet"}}}}},
		Nodes: contract.Bounded[contract.Node]{Items: []contract.Node{}, Truncated: true},
		Actions: contract.Bounded[contract.ActionEntry]{Items: []contract.ActionEntry{
			{Name: "note", State: contract.ActionReady, Params: []contract.ParamEntry{{Name: "topic", Type: "string"}}, Bound: []string{}},
			{Name: "note", State: contract.ActionReady, Params: []contract.ParamEntry{}, Bound: []string{}, CaseID: "case-1"},
		}},
	}
	for _, id := range ids {
		v.Nodes.Items = append(v.Nodes.Items, itemNode(id))
	}
	return v
}

// TestEncodeView_AsMarshal: the View the gateway encodes once, entry by entry, is the
// JSON json.Marshal writes, so its digest is contract.ViewDigest's.
func TestEncodeView_AsMarshal(t *testing.T) {
	// A field added to the View must be added to the gateway's encoding too.
	var fields []string
	for f := range reflect.TypeFor[contract.View]().Fields() {
		fields = append(fields, f.Tag.Get("json"))
	}
	want := []string{"position", "cases", "caseTypes", "roots", "nodes", "actions", "decisions,omitempty"}
	if !slices.Equal(fields, want) {
		t.Fatalf("contract.View's fields are %q, the gateway encodes %q: change encodeView with the View", fields, want)
	}
	decisions := testView("1")
	decisions.Decisions = &contract.Bounded[contract.DecidableRequest]{Items: []contract.DecidableRequest{{ID: "req_1",
		RequestedBy: "agent:agt_2", Digest: "sha256:aa", Deadline: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), Class: "small", Policy: 2}}}
	noDecisions := testView()
	noDecisions.Decisions = &contract.Bounded[contract.DecidableRequest]{}
	views := map[string]contract.View{
		"the zero View":                   {},
		"every list filled":               testView("3", "2", "1"),
		"no nodes, as []":                 testView(),
		"decisions listed":                decisions,
		"decisions listed, none, as null": noDecisions,
		"a derived node's premises":       func() contract.View { v := testView("1"); v.Nodes.Items[0].Premises = []string{"n-0"}; return v }(),
	}
	for name, v := range views {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, digest, err := gateway.EncodeView(v)
			if err != nil {
				t.Fatalf("EncodeView: %v", err)
			}
			if string(got) != string(want) {
				t.Errorf("EncodeView =\n%s\nwant json.Marshal's\n%s", got, want)
			}
			if vd, err := contract.ViewDigest(v); err != nil || digest != vd {
				t.Errorf("digest %v, want ViewDigest %v (%v)", digest, vd, err)
			}
		})
	}
}

// TestToolResult_AsMarshal: a result whose View is sent in full is the JSON json.Marshal
// writes for it, the View encoded once and put in its place.
func TestToolResult_AsMarshal(t *testing.T) {
	no := false
	ops := []contract.OperationEntry{{Tool: "ApplyBatch", Label: "ApplyBatch 1 ops", State: contract.OpDone,
		At: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), Since: time.Date(2026, 12, 1, 3, 0, 1, 0, time.UTC)}}
	results := map[string]contract.ToolResult{
		"accepted, with operations": {Accepted: true, Result: json.RawMessage(`{"nodeIds": ["n-1"]}`), View: testView("1"), Operations: ops},
		"refused, no operations":    {ErrorCode: contract.CodeInvalidArgument, Teaching: "send <one> object", RequestExecuted: &no, View: testView()},
		"no View":                   {Accepted: true, Operations: ops},
	}
	for name, r := range results {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gateway.ResultText(r)
			if err != nil {
				t.Fatalf("ResultText: %v", err)
			}
			if got != string(want) {
				t.Errorf("text =\n%s\nwant json.Marshal's\n%s", got, want)
			}
		})
	}
}

// TestViewDelta_MakesTheNewView: a delta the gateway sends, applied to the View it was
// made from, gives exactly the new View (the same digest); where no delta can say it, the
// View is sent whole.
func TestViewDelta_MakesTheNewView(t *testing.T) {
	with := func(v contract.View, f func(*contract.View)) contract.View { f(&v); return v }
	pairs := []struct {
		name      string
		old, new  contract.View
		wantDelta bool
	}{
		{"new nodes push old ones out", testView("4", "3", "2", "1"), testView("6", "5", "4", "3"), true},
		{"a node's content changed", testView("3", "2", "1"),
			with(testView("3", "2", "1"), func(v *contract.View) { v.Nodes.Items[1].Holds = new(bool) }), true},
		{"an Action became blocked, the position closed", testView("1"), with(testView("1"), func(v *contract.View) {
			v.Actions.Items = slices.Clone(v.Actions.Items)
			v.Actions.Items[1].State, v.Actions.Items[1].Reason = contract.ActionBlocked, contract.BlockCaseClosed
			v.Position.Writes = "the Case is closed"
		}), true},
		{"a Case opened", testView("1"), with(testView("1"), func(v *contract.View) {
			v.Cases.Items = append(slices.Clone(v.Cases.Items), contract.CaseEntry{CaseID: "case-2", Root: "case-2:root", CaseType: "exploration",
				BusinessKey: contract.Args{"topic": str("b")}, Status: contract.CaseRunning})
			v.Nodes.Truncated = false
		}), true},
		{"every node went, the list stays []", testView("2", "1"), with(testView("9"), func(v *contract.View) { v.Nodes.Items = []contract.Node{} }), true},
		{"nodes went from [] to null", testView(), with(testView(), func(v *contract.View) { v.Nodes.Items = nil }), false},
		{"entries kept changed order", testView("2", "1"), testView("1", "2"), false},
		{"every entry changed", testView("1"), contract.View{Position: contract.Position{Writes: "x"},
			Nodes: contract.Bounded[contract.Node]{Items: []contract.Node{itemNode("9")}}}, false},
		{"decisions appeared", testView("1"), with(testView("1"), func(v *contract.View) {
			v.Decisions = &contract.Bounded[contract.DecidableRequest]{Items: []contract.DecidableRequest{{ID: "req_1"}}}
		}), false},
		{"a key twice", testView("1"), testView("2", "2", "1"), false},
	}
	for _, tt := range pairs {
		t.Run(tt.name, func(t *testing.T) {
			d, ok, err := gateway.DeltaOf(tt.old, tt.new)
			if err != nil {
				t.Fatalf("DeltaOf: %v", err)
			}
			if ok != tt.wantDelta {
				t.Fatalf("DeltaOf sends a delta: %v, want %v (%+v)", ok, tt.wantDelta, d)
			}
			if !ok {
				return
			}
			if from, err := contract.ViewDigest(tt.old); err != nil || d.From != from {
				t.Errorf("delta from %v, want the held View's digest %v (%v)", d.From, from, err)
			}
			got, err := d.Apply(tt.old)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			want, err := contract.ViewDigest(tt.new)
			if err != nil {
				t.Fatal(err)
			}
			if gd, err := contract.ViewDigest(got); err != nil || gd != want {
				t.Errorf("the applied View's digest is %v (%v), want the new View's %v; diff (-want +got):\n%s", gd, err, want,
					cmp.Diff(tt.new, got, cmp.Comparer(func(a, b contract.Value) bool { return a == b })))
			}
		})
	}
}
