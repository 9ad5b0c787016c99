package contract_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// valueEqual lets cmp compare Values, whose fields are unexported.
var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

func mustInt(t testing.TB, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustFloat(t testing.TB, f float64) contract.Value {
	t.Helper()
	v, err := contract.FloatValue(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestGolden pins the JSON form of every wire type the Board defines: each value is
// encoded and compared with testdata/<name>.json, then decoded back and compared with
// itself, so the wire cannot drift unseen.
func TestGolden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	key := contract.Args{"job_id": contract.StringValue("calc-001")}
	calc := contract.Atom{Predicate: "calculation_input", Args: contract.Args{
		"job_id": contract.StringValue("calc-001"), "unit_price_cents": mustInt(t, 129900),
		"quantity": mustInt(t, 2), "shipping_cents": mustInt(t, 3000), "rate": mustFloat(t, 0.5),
		"rush": contract.BoolValue(false),
	}}
	yes := true
	node := contract.Node{NodeID: "n-0123456789abcdef", Kind: contract.NodeFact, CreatedBy: "tool:workspace",
		Tier: contract.TierAttested, Atom: &calc, Seq: 3}
	tests := []struct {
		name string
		v    any
	}{
		{"atom", &calc},
		{"batch", &contract.Batch{Operations: []contract.Operation{
			{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "goal_node", Args: contract.Args{"case": contract.StringValue("case-1")}}},
			{Op: contract.OpAddAxiom, NodeID: "my-rule", CaseID: "case-2", Rule: &contract.Rule{
				Head: contract.Atom{Predicate: "big", Args: contract.Args{"job_id": contract.VarValue("j")}},
				Body: []contract.Literal{
					{Predicate: "calculation_result", Args: contract.Args{"job_id": contract.VarValue("j"), "total": contract.VarValue("t")}},
					{Predicate: "gt", Args: contract.Args{"left": contract.VarValue("t"), "right": mustInt(t, 100000)}},
					{Predicate: "flagged", Args: contract.Args{"job_id": contract.VarValue("j")}, NAF: true},
				}}},
			{Op: contract.OpDeclareGoal, Atom: &contract.Atom{Predicate: "calculation_verified", Args: key}},
			{Op: contract.OpRetractNode, NodeID: "n-1"},
			{Op: contract.OpReviseFact, NodeID: "n-2", Atom: &contract.Atom{Predicate: "note", Args: contract.Args{"text": contract.StringValue("x")}, Negated: true}},
			{Op: contract.OpDeriveAggregate, Rule: &contract.Rule{
				Head: contract.Atom{Predicate: "order_total", Args: contract.Args{"order": contract.VarValue("o")}},
				Body: []contract.Literal{{Predicate: "line", Args: contract.Args{"order": contract.VarValue("o"), "amount": contract.VarValue("a")}}},
			}, Aggregate: &contract.Aggregate{Function: "sum", Of: "a", Into: "total"}},
		}}},
		{"node", &node},
		{"node_change", &[]contract.NodeChange{{Put: &node}, {Delete: "n-2"}}},
		{"case", &contract.Case{CaseID: "case-1", Root: "case-1:root", CaseType: "verified_calculation", BusinessKey: key,
			Status: contract.CaseClosed, Release: "docket.verified-calculation@1.0.0", ReleaseDigest: "sha256:aa",
			ContractDigest: "sha256:bb", KeyDigest: "sha256:cc", OpenedBy: "agent:calc", OpenedAt: at,
			Terminal: []string{"write_result"}, Disposition: contract.DispositionCompleted, ClosedAt: &at}},
		{"receipt", &contract.ClosureReceipt{CaseID: "case-1", Root: "case-1:root", CaseType: "verified_calculation",
			BusinessKey: key, Disposition: contract.DispositionCompleted, Release: "docket.verified-calculation@1.0.0",
			ReleaseDigest: "sha256:aa", ContractDigest: "sha256:bb", KeyDigest: "sha256:cc", Certified: true,
			Acceptance: &contract.Node{NodeID: "d-1", Kind: contract.NodeDerived, Tier: contract.TierAttested,
				Atom: &contract.Atom{Predicate: "calculation_verified", Args: key}, Premises: []string{"d-0", "n-9"}},
			ExplanationDigest: "sha256:dd", ClosedBy: "agent:calc", At: at}},
		{"view", &contract.View{
			Position: contract.Position{Writes: contract.PositionOpen, NewCases: contract.PositionOpen, Rules: "agent rules are Case-local"},
			Cases: contract.Bounded[contract.CaseEntry]{Items: []contract.CaseEntry{{CaseID: "case-1", Root: "case-1:root",
				CaseType: "verified_calculation", BusinessKey: key, Status: contract.CaseRunning}}},
			CaseTypes: contract.Bounded[contract.CaseTypeEntry]{Items: []contract.CaseTypeEntry{{Name: "verified_calculation",
				KeyArgs: []string{"job_id"}, Opening: "calculation_input", Acceptance: "calculation_verified", Floor: contract.TierAttested}}},
			Roots: contract.Bounded[contract.RootEntry]{Items: []contract.RootEntry{{CaseID: "case-1", Root: "case-1:root",
				Floor: contract.TierAttested, Gaps: contract.Bounded[string]{Items: []string{"calculation_verified is not derived yet"}}}}},
			Nodes: contract.Bounded[contract.Node]{Items: []contract.Node{{NodeID: "case-1:root", Kind: contract.NodeGoal,
				CreatedBy: "agent:calc", Tier: contract.TierAsserted, Atom: &contract.Atom{Predicate: "calculation_verified", Args: key}, Holds: new(bool)},
				{NodeID: "x", Kind: contract.NodeGoal, CreatedBy: "agent:calc", Tier: contract.TierAsserted, Holds: &yes}}, Truncated: true},
			Actions: contract.Bounded[contract.ActionEntry]{Items: []contract.ActionEntry{
				{Name: "write_result", State: contract.ActionReady, Waits: []contract.Wait{contract.WaitDecision, contract.WaitExecution},
					Params: []contract.ParamEntry{{Name: "path", Type: "string"}}, Bound: []string{"job_id", "subtotal", "total"}, CaseID: "case-1"},
				{Name: "verify_result", State: contract.ActionBlocked, Reason: contract.BlockRule, Detail: "its preconditions do not hold",
					Params: []contract.ParamEntry{}, Bound: []string{"path"}, CaseID: "case-1"},
			}},
		}},
		{"view_delta", &contract.ViewDelta{From: contract.Sum([]byte("the held view")),
			Position: &contract.Position{Writes: contract.PositionOpen, NewCases: contract.PositionOpen, Rules: "agent rules are Case-local"},
			Nodes: contract.ListDelta[contract.Node]{Removed: []string{"n-1", "n-2"},
				Added: []contract.Placed[contract.Node]{{At: 0, Item: node}}, Truncated: &yes},
			Actions: contract.ListDelta[contract.ActionEntry]{Removed: []string{"write_result@case-1"},
				Added: []contract.Placed[contract.ActionEntry]{{At: 1, Item: contract.ActionEntry{Name: "write_result",
					State: contract.ActionBlocked, Reason: contract.BlockRule, Params: []contract.ParamEntry{}, Bound: []string{}, CaseID: "case-1"}}}},
		}},
		{"execution_request", &contract.ExecutionRequest{Action: "write_result", CaseID: "case-1", Tool: "docket.workspace.write_json@1",
			Kind: "write", SourceTypes: []string{"file"}, Approval: "person",
			Args: contract.Args{"job_id": contract.StringValue("calc-001"), "path": contract.StringValue("out/result.json"),
				"subtotal": mustInt(t, 259800), "total": mustInt(t, 262800)}, Bound: []string{"subtotal", "total"}}},
		{"execution_outcome", &contract.ExecutionOutcome{OK: true, Rows: []contract.Args{{"subtotal": mustInt(t, 259800), "total": mustInt(t, 262800)}}}},
		{"error", contract.Errorf(contract.CodeCaseAcceptanceNotDerived, "calculation_verified holds only as an asserted fact")},
		{"why", &contract.Why{Shown: 3, Omitted: 1, Root: contract.WhyNode{NodeID: "d_4a85", Kind: contract.NodeDerived,
			Tier: contract.TierAttested, Atom: &contract.Atom{Predicate: "calculation_verified", Args: key},
			Rule: "docket.verified-calculation/calculation_verified", RuleBy: "capability:docket.verified-calculation@1.0.0",
			Premises: []contract.WhyNode{
				{NodeID: "d_77c1", Kind: contract.NodeDerived, Tier: contract.TierAttested, Atom: &contract.Atom{Predicate: "calculation_result", Args: key},
					Rule: "docket.verified-calculation/calculation_result", RuleBy: "capability:docket.verified-calculation@1.0.0", More: 1},
				{NodeID: "n_output", Kind: contract.NodeFact, Tier: contract.TierAttested, Atom: &contract.Atom{Predicate: "output_file", Args: key},
					CreatedBy: "tool:docket.workspace.read_json@1", Attestation: &contract.Attestation{Tool: "docket.workspace.read_json@1",
						Action: "verify_result", Release: "docket.verified-calculation@1.0.0",
						Sources: []contract.Source{{Connection: "con_0123456789abcdef", Name: "workspace", Type: "file",
							Words: []string{"calculation_input", "output_file"}, Tier: contract.TierAttested, Digest: "sha256:00"}}}},
				{NodeID: "d_4a85", Kind: contract.NodeDerived, Tier: contract.TierAttested, Repeat: true},
			}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.MarshalIndent(tt.v, "", "  ")
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run go test -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("JSON of %s differs from %s (-want +got):\n%s", tt.name, path, diff)
			}
			back := reflect.New(reflect.TypeOf(tt.v).Elem())
			if err := json.NewDecoder(bytes.NewReader(want)).Decode(back.Interface()); err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if diff := cmp.Diff(tt.v, back.Interface(), valueEqual); diff != "" {
				t.Errorf("decoding %s does not give the value back (-want +got):\n%s", path, diff)
			}
		})
	}
}
