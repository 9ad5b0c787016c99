package verifiedcalculation_test

import (
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/workspace"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(verifiedcalculation.Files, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExample_PartsAgree checks the example's files against each other: every Tool an
// Action executes is one the worker's manifest provides, with the same kind and Source
// type, and the Source the capability needs is the one the vault template declares.
func TestExample_PartsAgree(t *testing.T) {
	capFS, err := fs.Sub(verifiedcalculation.Files, "capability")
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := capability.LoadFS(capFS)
	if err != nil {
		t.Fatalf("the capability does not load: %v", err)
	}
	m, err := worker.ParseManifest(read(t, "tools.json"), map[string]worker.Adapter{worker.AdapterWorkspace: workspace.Adapter{}})
	if err != nil {
		t.Fatalf("tools.json: %v", err)
	}
	executed := 0
	for _, a := range pkg.Declarations.Actions {
		if a.Execution == nil {
			continue
		}
		executed++
		tool, _, ok := m.Lookup(contract.ToolID(a.Execution.Tool))
		if !ok {
			t.Errorf("action %s runs %s, which the worker's manifest does not provide", a.Name, a.Execution.Tool)
			continue
		}
		if tool.Kind != string(a.Execution.Kind) {
			t.Errorf("action %s is a %s; its Tool %s is a %s", a.Name, a.Execution.Kind, a.Execution.Tool, tool.Kind)
		}
		for _, st := range a.Execution.SourceTypes {
			if !slices.Contains(tool.SourceTypes, st) {
				t.Errorf("action %s runs on a %s Source; its Tool %s takes %v", a.Name, st, a.Execution.Tool, tool.SourceTypes)
			}
		}
	}
	if executed != 3 {
		t.Errorf("%d Actions execute on the worker, want load_input, write_result and verify_result", executed)
	}
	var vault struct {
		Sources map[string]struct {
			Type string `json:"type"`
			Root string `json:"root"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(read(t, "vault.template.json"), &vault); err != nil {
		t.Fatalf("vault.template.json: %v", err)
	}
	for _, src := range pkg.Declarations.Sources {
		v, ok := vault.Sources[src.Name]
		if !ok || v.Type != src.Type || v.Root != "$WORKSPACE" {
			t.Errorf("the capability needs Source %s (%s); the vault template has %+v", src.Name, src.Type, v)
		}
	}
}

// TestExample_ScriptNeverStatesAValue: the scripted model's calls name jobs, files and
// Cases, never an input or derived number.
func TestExample_ScriptNeverStatesAValue(t *testing.T) {
	s, err := scripted.ParseJSON(read(t, "script.json"))
	if err != nil {
		t.Fatalf("script.json: %v", err)
	}
	var tools []string
	for _, turn := range s.Turns {
		for _, c := range turn.Calls {
			tools = append(tools, c.Tool)
			for _, n := range []string{"129900", "3000", "259800", "262800", `"quantity"`, `"subtotal"`, `"total"`} {
				if strings.Contains(string(c.Arguments), n) {
					t.Errorf("the script's %s call states %s: %s", c.Tool, n, c.Arguments)
				}
			}
		}
	}
	want := []string{"ApplyAction", "OpenCase", "QueryBoard", "ApplyAction", "ApplyAction", "CloseCase"}
	if !slices.Equal(tools, want) {
		t.Errorf("the script calls %v, want %v", tools, want)
	}
}
