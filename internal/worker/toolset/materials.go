package toolset

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// AddMaterialArea writes the file Source source, rooted at the material area root, into
// the vault, unless it is there already with that root. Its deny list holds "*", so the
// workspace Tools, which honour a Source's deny list, read nothing through it: only the
// material read (docket.material.read@1), which returns a reference in place of the text,
// reads the area (docs/materials.md). A file Source of that name at that root is kept as
// the person wrote it, deny list or not; one that is something else is refused: the vault
// is the person's as well, and what it holds is not replaced.
func (f Files) AddMaterialArea(source, root string) (Added, error) {
	if err := checkSourceName(source); err != nil {
		return Added{}, err
	}
	if !filepath.IsAbs(root) {
		return Added{}, fieldErr("root", "give the material area as an absolute path, as in /home/ada/.docket/materials.")
	}
	root = filepath.Clean(root)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return Added{}, fmt.Errorf("material area: %w", err)
	}
	added := Added{Source: &Binding{Name: source, Type: "file"}, Tools: []contract.ToolID{worker.MaterialReadTool}}
	if _, err := os.Lstat(f.Vault); err == nil {
		v, err := worker.LoadVault(f.Vault)
		if err != nil {
			return Added{}, err
		}
		if s, ok := v.Source(source); ok {
			if s.Type == "file" && filepath.Clean(s.Root) == root {
				return added, nil
			}
			return Added{}, contract.Errorf(contract.CodeSourceExists, "the vault %s has a Source %s that is not the material area %s; rename that Source, then add the files again.", f.Vault, source, root)
		}
	}
	if err := f.apply(change{source: source, entry: vaultEntry{Type: "file", Root: root, Deny: []string{"*"}}}); err != nil {
		return Added{}, err
	}
	return added, nil
}
