package worker_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// readCases reads testdata/<dir>/*.txt files of the form: input, "-- want --", expected.
func readCases(t testing.TB, dir string) map[string][2]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases in testdata/%s: %v", dir, err)
	}
	out := map[string][2]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in, want, ok := bytes.Cut(b, []byte("\n-- want --\n"))
		if !ok {
			t.Fatalf("%s: no -- want -- line", p)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".txt")] = [2]string{string(in), strings.TrimSpace(string(want))}
	}
	return out
}

func TestParseManifest(t *testing.T) {
	for name, c := range readCases(t, "manifest") {
		t.Run(name, func(t *testing.T) {
			_, err := worker.ParseManifest([]byte(c[0]), nil)
			got := "ok"
			if err != nil {
				got = string(contract.CodeOf(err))
			}
			if got != c[1] {
				t.Errorf("ParseManifest(%s) = %v, want %s", name, err, c[1])
			}
		})
	}
}

// TestManifest_digest shows that a Tool's digest is over its canonical definition: the
// same Tool written differently has the same digest, and any changed field changes it.
func TestManifest_digest(t *testing.T) {
	digest := func(js string) string {
		t.Helper()
		m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.x@1":`+js+`}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, d, ok := m.Lookup("acme.x@1")
		if !ok || !strings.HasPrefix(d, "sha256:") {
			t.Fatalf("Lookup = %q, %v", d, ok)
		}
		return d
	}
	base := digest(`{"adapter":"run","sourceTypes":[],"entry":"bin/x","params":{"a":{"type":"string"}}}`)
	tests := []struct {
		name string
		js   string
		same bool
	}{
		{"reordered and spaced", `{ "params":{"a":{"type":"string"}}, "entry":"bin/x", "sourceTypes":[], "adapter":"run" }`, true},
		{"default kind written out", `{"adapter":"run","sourceTypes":[],"entry":"bin/x","kind":"run","params":{"a":{"type":"string"}}}`, true},
		{"other entry", `{"adapter":"run","sourceTypes":[],"entry":"bin/y","params":{"a":{"type":"string"}}}`, false},
		{"required param", `{"adapter":"run","sourceTypes":[],"entry":"bin/x","params":{"a":{"type":"string","required":true}}}`, false},
		{"fence added", `{"adapter":"run","sourceTypes":[],"entry":"bin/x","params":{"a":{"type":"string"}},"fence":{"timeoutMs":1}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := digest(tt.js) == base; got != tt.same {
				t.Errorf("digest equal = %v, want %v", got, tt.same)
			}
		})
	}
}

// TestDescriptors_builtin pins the built-in Tools' descriptors, digests included: a change
// to a built-in definition must show in review, because locks name these digests.
func TestDescriptors_builtin(t *testing.T) {
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.ParseVault([]byte(`{"sources":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: map[string]worker.Adapter{worker.AdapterWorkspace: nopAdapter{}, worker.AdapterMCP: nopAdapter{}}, Workspace: worker.WorkspaceReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(e.Descriptors(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "builtin_descriptors.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (go test -update creates it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("built-in descriptors changed (-want +got):\n%s", diff)
	}
}

func FuzzParseManifest(f *testing.F) {
	for _, c := range readCases(f, "manifest") {
		f.Add(c[0])
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := worker.ParseManifest([]byte(in), nil)
		if err != nil {
			if contract.CodeOf(err) == "" {
				t.Fatalf("ParseManifest(%q) = %v, want a coded refusal", in, err)
			}
			return
		}
		for _, id := range m.IDs() {
			tool, d, _ := m.Lookup(id)
			if _, err := contract.ParseToolID(string(id)); err != nil {
				t.Fatalf("accepted tool id %q: %v", id, err)
			}
			if _, ok := tool.Params["source"]; ok || d == "" {
				t.Fatalf("accepted tool %s with a source param or no digest", id)
			}
			if _, ok := tool.Params["sql"]; ok && strings.HasPrefix(tool.Adapter, "db-") {
				t.Fatalf("accepted db tool %s with a sql param", id)
			}
		}
	})
}

// TestParseManifest_unknownField: a key the manifest does not have is named, with its line,
// where it is, the field it was most likely meant to be when one is near and the fields
// there are, never as a Go decoder's words.
func TestParseManifest_unknownField(t *testing.T) {
	tests := []struct {
		name, tool, want string
	}{
		{"a typo of a Tool's field", `{"adaptor":"run","entry":"x"}`,
			`unknown field "adaptor" (did you mean "adapter"?) at "tools.acme.x@1", line 1; its fields are adapter, description, entry, env, facts, fence, kind, params, returns, sourceTypes`},
		{"a typo of a fence's field", `{"adapter":"run","entry":"x","fence":{"timeout":5}}`,
			`unknown field "timeout" (did you mean "timeoutMs"?) at "tools.acme.x@1.fence", line 1; its fields are allow, hosts, maxBytes, timeoutMs`},
		{"nothing near", `{"adapter":"run","entry":"x","colour":"red"}`,
			`unknown field "colour" at "tools.acme.x@1", line 1; its fields are adapter, description, entry, env, facts, fence, kind, params, returns, sourceTypes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.x@1":`+tt.tool+`}}`), nil)
			ce, ok := errors.AsType[*contract.Error](err)
			if !ok || ce.Code != contract.CodeManifestInvalid || ce.Teaching != tt.want {
				t.Errorf("ParseManifest = %v, want manifest_invalid: %s", err, tt.want)
			}
		})
	}
}

// TestManifest_httpKindByMethod: an http Tool whose manifest says no kind reads for GET
// and HEAD and writes for any other method, so a POST is never offered as a read; a kind
// the manifest states is kept (docs/workers.md, "http").
func TestManifest_httpKindByMethod(t *testing.T) {
	tests := []struct {
		entry, kind, want string
	}{
		{"GET /orders/{id}", "", contract.ToolKindRead},
		{"HEAD /orders", "", contract.ToolKindRead},
		{"get /orders", "", contract.ToolKindRead},
		{"POST /orders", "", contract.ToolKindWrite},
		{"PUT /orders/{id}", "", contract.ToolKindWrite},
		{"PATCH /orders/{id}", "", contract.ToolKindWrite},
		{"DELETE /orders/{id}", "", contract.ToolKindWrite},
		{"POST /search", contract.ToolKindRead, contract.ToolKindRead},
		{"GET /poke", contract.ToolKindWrite, contract.ToolKindWrite},
	}
	for _, tt := range tests {
		js, err := json.Marshal(map[string]any{"format": worker.ManifestFormat, "tools": map[string]any{
			"acme.x@1": map[string]any{"adapter": "http", "sourceTypes": []string{"http"}, "entry": tt.entry, "kind": tt.kind, "params": map[string]any{"id": map[string]string{"type": "string"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := worker.ParseManifest(js, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.entry, err)
		}
		if def, _, _ := m.Lookup("acme.x@1"); def.Kind != tt.want {
			t.Errorf("%q with kind %q runs as %s, want %s", tt.entry, tt.kind, def.Kind, tt.want)
		}
	}
}
