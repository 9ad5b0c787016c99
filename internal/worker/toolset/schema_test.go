package toolset_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/toolset"
)

func TestParamsFromSchema(t *testing.T) {
	str := func(req bool, desc string) worker.Param {
		return worker.Param{Type: worker.ParamString, Required: req, Description: desc}
	}
	tests := []struct {
		name    string
		schema  string
		want    map[string]worker.Param
		skipped []string // names left out
		refused string   // a word of the refusal; "" when mapped
	}{
		{name: "empty", schema: ``, want: map[string]worker.Param{}},
		{name: "null", schema: `null`, want: map[string]worker.Param{}},
		{name: "no properties", schema: `{"type":"object"}`, want: map[string]worker.Param{}},
		{name: "scalars", schema: `{"type":"object","properties":{
			"path":{"type":"string","description":"the file"},
			"n":{"type":"integer"},"ratio":{"type":"number"},"dry":{"type":"boolean"}},"required":["path"]}`,
			want: map[string]worker.Param{"path": str(true, "the file"), "n": {Type: worker.ParamInteger},
				"ratio": {Type: worker.ParamNumber}, "dry": {Type: worker.ParamBoolean}}},
		{name: "nullable", schema: `{"type":"object","properties":{"q":{"type":["string","null"]}}}`,
			want: map[string]worker.Param{"q": str(false, "")}},
		{name: "enum of strings", schema: `{"properties":{"order":{"enum":["asc","desc"]}},"required":["order"]}`,
			want: map[string]worker.Param{"order": str(true, "")}},
		{name: "optional array left out", schema: `{"type":"object","properties":{"path":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"]}`,
			want: map[string]worker.Param{"path": str(true, "")}, skipped: []string{"tags"}},
		{name: "optional camelCase left out", schema: `{"type":"object","properties":{"path":{"type":"string"},"dryRun":{"type":"boolean"}}}`,
			want: map[string]worker.Param{"path": str(false, "")}, skipped: []string{"dryRun"}},
		{name: "optional source left out", schema: `{"type":"object","properties":{"source":{"type":"string"}}}`,
			want: map[string]worker.Param{}, skipped: []string{"source"}},
		{name: "required array", schema: `{"type":"object","properties":{"edits":{"type":"array"}},"required":["edits"]}`, refused: "edits"},
		{name: "required object", schema: `{"type":"object","properties":{"opts":{"type":"object"}},"required":["opts"]}`, refused: "object"},
		{name: "required camelCase", schema: `{"type":"object","properties":{"filePath":{"type":"string"}},"required":["filePath"]}`, refused: "param name"},
		{name: "required union", schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"required":["v"]}`, refused: "anyOf"},
		{name: "required two types", schema: `{"type":"object","properties":{"v":{"type":["string","integer"]}},"required":["v"]}`, refused: "not one scalar"},
		{name: "required untyped", schema: `{"type":"object","properties":{"v":{}},"required":["v"]}`, refused: "no type"},
		{name: "required missing", schema: `{"type":"object","properties":{},"required":["ghost"]}`, refused: "ghost"},
		{name: "not an object", schema: `{"type":"array"}`, refused: "object"},
		{name: "not JSON", schema: `{"type":`, refused: "not a JSON object"},
		{name: "top-level ref", schema: `{"$ref":"#/defs/x"}`, refused: "$ref"},
		{name: "bad required", schema: `{"type":"object","required":"path"}`, refused: "required"},
		{name: "too big", schema: `{"description":"` + strings.Repeat("x", toolset.MaxSchemaBytes) + `"}`, refused: "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := toolset.ParamsFromSchema([]byte(tt.schema))
			if tt.refused != "" {
				if contract.CodeOf(err) != contract.CodeToolSchema || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("ParamsFromSchema = %+v, %v; want tool_schema naming %q", m, err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, m.Params); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
			var skipped []string
			for _, s := range m.Skipped {
				if s.Reason == "" {
					t.Errorf("%s skipped without a reason", s.Name)
				}
				skipped = append(skipped, s.Name)
			}
			if diff := cmp.Diff(tt.skipped, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReturnsFromSchema(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []string
	}{
		{"none", ``, nil},
		{"object", `{"type":"object","properties":{"sum":{"type":"integer"},"at":{"type":"string"}}}`, []string{"at", "sum"}},
		{"rows", `{"type":"object","properties":{"rows":{"type":"array","items":{"type":"object","properties":{"id":{},"total":{}}}}}}`, []string{"id", "total"}},
		{"rows beside others", `{"type":"object","properties":{"rows":{"type":"array"},"count":{}}}`, []string{"count", "rows"}},
		{"no properties", `{"type":"object"}`, nil},
		{"not JSON", `{`, nil},
	}
	for _, tt := range tests {
		if got := toolset.ReturnsFromSchema([]byte(tt.schema)); !cmp.Equal(tt.want, got) {
			t.Errorf("%s: ReturnsFromSchema = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMCPTool: a discovered tool becomes a manifest entry the worker loads, a write by
// default, with returns when it declares structured output.
func TestMCPTool(t *testing.T) {
	d := toolset.Discovered{Name: "read_file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}}}`)}
	tool, _, err := toolset.MCPTool(d, "")
	if err != nil {
		t.Fatal(err)
	}
	want := worker.Tool{Adapter: worker.AdapterMCP, SourceTypes: []string{"mcp"}, Entry: "read_file", Kind: contract.ToolKindWrite,
		Params: map[string]worker.Param{"path": {Type: worker.ParamString, Required: true}}, Returns: []string{"content"}}
	if diff := cmp.Diff(want, tool, cmp.AllowUnexported(worker.Tool{})); diff != "" {
		t.Errorf("tool (-want +got):\n%s", diff)
	}
	mustLoad(t, "acme.read_file@1", tool)
	if _, _, err := toolset.MCPTool(d, "delete"); contract.CodeOf(err) != contract.CodeTemplateField || !strings.Contains(err.Error(), "kind") {
		t.Errorf("kind delete = %v, want template_field naming kind", err)
	}
	if id := toolset.ToolIDFor("Files-2", "9read.File"); id != "files-2.t9read_file@1" {
		t.Errorf("ToolIDFor = %s", id)
	}
}

// mustLoad fails unless a manifest holding tool as id loads as the worker loads it.
func mustLoad(t testing.TB, id contract.ToolID, tool worker.Tool) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"format": worker.ManifestFormat, "tools": map[contract.ToolID]worker.Tool{id: tool}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.ParseManifest(b, nil); err != nil {
		t.Fatalf("the mapped tool does not load: %v\n%s", err, b)
	}
}

// FuzzParamsFromSchema: whatever schema a server lists, the mapping never panics, and
// what it maps is a Tool the worker loads, whose required params are the schema's.
func FuzzParamsFromSchema(f *testing.F) {
	for _, s := range []string{``, `null`, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
		`{"properties":{"x":{"type":["null","integer"]},"Y":{"enum":[1]}}}`, `{"properties":{"source":{"type":"string"}},"required":["source"]}`,
		`{"type":"object","properties":{"e":{"type":"array"}}}`, `[]`, `{"properties":null}`, `{"required":[null]}`} {
		f.Add([]byte(s), []byte(`{"properties":{"n":{}}}`))
	}
	f.Fuzz(func(t *testing.T, in, out []byte) {
		m, err := toolset.ParamsFromSchema(in)
		if err != nil {
			if contract.CodeOf(err) != contract.CodeToolSchema {
				t.Fatalf("refused with %v, want tool_schema", err)
			}
			return
		}
		tool, _, err := toolset.MCPTool(toolset.Discovered{Name: "t", InputSchema: in, OutputSchema: out}, contract.ToolKindRead)
		if err != nil {
			t.Fatalf("ParamsFromSchema mapped it, MCPTool refused it: %v", err)
		}
		if len(m.Params) != len(tool.Params) {
			t.Fatalf("params %v, tool params %v", m.Params, tool.Params)
		}
		mustLoad(t, "fuzz.t@1", tool)
		var top struct {
			Required []string `json:"required"`
		}
		if json.Unmarshal(in, &top) == nil {
			for _, r := range top.Required {
				if p, ok := m.Params[r]; !ok || !p.Required {
					t.Fatalf("required %q mapped to %+v, %v", r, p, ok)
				}
			}
		}
	})
}
