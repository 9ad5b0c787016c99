package toolset_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestAddMaterialArea: the material area goes into the vault as a file Source the
// workspace Tools may not read (deny "*"), once; a file Source of that name at that root
// is kept as written, and one that is anything else is refused, never replaced.
func TestAddMaterialArea(t *testing.T) {
	tests := []struct {
		name  string
		vault string // the vault before, "" for none; ROOT stands for the area
		code  contract.Code
		deny  []string // the deny list after
	}{
		{"no vault yet", "", "", []string{"*"}},
		{"a vault with another Source", `{"sources": {"ws": {"type": "file", "root": "/tmp"}}}`, "", []string{"*"}},
		{"written by hand at the area", `{"sources": {"materials": {"type": "file", "root": "ROOT"}}}`, "", nil},
		{"another root", `{"sources": {"materials": {"type": "file", "root": "/tmp"}}}`, contract.CodeSourceExists, nil},
		{"another type", `{"sources": {"materials": {"type": "http", "url": "https://example.com"}}}`, contract.CodeSourceExists, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := files(t)
			root := filepath.Join(t.TempDir(), "materials")
			if tt.vault != "" {
				if err := os.WriteFile(f.Vault, []byte(strings.ReplaceAll(tt.vault, "ROOT", root)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			added, err := f.AddMaterialArea("materials", root)
			if tt.code != "" {
				if contract.CodeOf(err) != tt.code {
					t.Fatalf("AddMaterialArea = %+v, %v; want %s", added, err, tt.code)
				}
				return
			}
			if err != nil || added.Source == nil || added.Source.Name != "materials" || !slices.Equal(added.Tools, []contract.ToolID{worker.MaterialReadTool}) {
				t.Fatalf("AddMaterialArea = %+v, %v", added, err)
			}
			if di, err := os.Stat(root); err != nil || di.Mode().Perm() != 0o700 {
				t.Errorf("the area: %v, %v; want a directory of mode 0700", di, err)
			}
			v, err := worker.LoadVault(f.Vault)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := v.Source("materials")
			if !ok || s.Type != "file" || s.Root != root || !slices.Equal(s.Deny, tt.deny) {
				t.Errorf("the vault's materials = %+v, want the area with deny %v", s, tt.deny)
			}
			if _, err := f.AddMaterialArea("materials", root); err != nil {
				t.Errorf("AddMaterialArea again = %v, want nothing to do", err)
			}
		})
	}
	if _, err := files(t).AddMaterialArea("materials", "relative/dir"); err == nil {
		t.Error("AddMaterialArea of a relative root succeeded")
	}
}
