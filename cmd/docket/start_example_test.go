package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestAddVaultSource: the example's workspace is added to docket start's vault beside
// what the vault holds; the same Source again changes nothing, and a Source of that
// name with another root is refused rather than replaced.
func TestAddVaultSource(t *testing.T) {
	tests := []struct {
		name, vault string
		want        []string      // parts of the vault afterwards
		code        contract.Code // "" when added
	}{
		{"empty", `{"sources": {}}`, []string{`"workspace"`, `"root": "/ws"`, `"type": "file"`}, ""},
		{"no sources yet", `{}`, []string{`"root": "/ws"`}, ""},
		{"another Source kept", `{"sources": {"db": {"type": "postgres", "dsn_file": "/k"}}}`, []string{`"db"`, `"dsn_file": "/k"`, `"root": "/ws"`}, ""},
		{"already there", `{"sources": {"workspace": {"type": "file", "root": "/ws"}}}`, []string{`"root": "/ws"`}, ""},
		{"another root", `{"sources": {"workspace": {"type": "file", "root": "/elsewhere"}}}`, []string{`"/elsewhere"`}, contract.CodeAlreadyExists},
		{"not JSON", `{`, []string{`{`}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vault.json")
			if err := os.WriteFile(path, []byte(tt.vault), 0o600); err != nil {
				t.Fatal(err)
			}
			err := addVaultSource(path, "workspace", "/ws")
			if got := contract.CodeOf(err); got != tt.code {
				t.Fatalf("addVaultSource = %v, want code %q", err, tt.code)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("the vault reads %s, want %s in it", b, w)
				}
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the vault's mode = %v (%v), want 0600", fi.Mode(), err)
			}
		})
	}
}
