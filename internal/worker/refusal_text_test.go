package worker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestRefusals_NameLineEntryAndFix: a manifest or a vault a person wrote by hand is
// refused with the line, the entry and the fix — the nearest field for a misspelt key —
// in words, never Go's types or a byte offset, and never a secret.
func TestRefusals_NameLineEntryAndFix(t *testing.T) {
	manifest := `{
  "format": "docket-worker-tools/1",
  "tools": {
    "acme.calc@1": {"adaptor": "run", "entry": "calc.sh"}
  }
}`
	wrongType := `{"format": "docket-worker-tools/1",
 "tools": {"acme.calc@1": {"adapter": "run", "entry": "calc.sh",
   "fence": {"timeoutMs": "30s"}}}}`
	malformed := "{\"format\": \"docket-worker-tools/1\",\n \"tools\": {\n  \"acme.calc@1\": {\"adapter\": \"run\" \"entry\": \"x\"}}}"
	tests := []struct {
		name  string
		src   string
		words []string
	}{
		{"a misspelt field", manifest, []string{`unknown field "adaptor" (did you mean "adapter"?) at "tools.acme.calc@1", line 4`, "its fields are adapter, "}},
		{"a value of the wrong type", wrongType, []string{`the value of "tools.fence.timeoutMs", line 3, is a string, but it takes a whole number`}},
		{"malformed JSON", malformed, []string{"line 3, column 36", "expected , or } in an object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := worker.ParseManifest([]byte(tt.src), nil)
			if contract.CodeOf(err) != contract.CodeManifestInvalid {
				t.Fatalf("ParseManifest = %v, want manifest_invalid", err)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseManifest = %v\nwant it to say %q", err, w)
				}
			}
			for _, goish := range []string{"json:", "Go struct", "byte "} {
				if strings.Contains(err.Error(), goish) {
					t.Errorf("ParseManifest = %v\nreads as Go internals (%q)", err, goish)
				}
			}
		})
	}

	vault := filepath.Join(t.TempDir(), "vault.json")
	src := "{\"sources\": {\n  \"calc\": {\"type\": \"file\", \"rot\": \"/srv\"},\n  \"db\": {\"type\": \"db\", \"dsn\": \"postgres://u:hunter2-very-secret@h/d\"}\n}}"
	if err := os.WriteFile(vault, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := worker.LoadVault(vault)
	if contract.CodeOf(err) != contract.CodeVaultInvalid {
		t.Fatalf("LoadVault = %v, want vault_invalid", err)
	}
	for _, w := range []string{vault, `unknown field "rot" (did you mean "root"?) at "sources.calc", line 2`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("LoadVault = %v\nwant it to say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("LoadVault = %v, which quotes a secret", err)
	}
}
