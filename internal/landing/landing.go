// Package landing says whether a path a call names lands plainly inside a root — the one
// check the worker and the coding agent's hook both make before an orchestrator's approval
// under a path class may stand (docs/security.md) — and which file names are credentials.
package landing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// Check says why the slash path p, relative to root, does not land plainly inside root,
// or "" when it does. It is judged on p as written, before any cleaning: p is absolute,
// empty, holds a backslash or a NUL, or has a ".." segment (docs/evil/../x, with docs/evil
// a link out, lands outside although it cleans to docs/x); a symbolic link on the way,
// the last element included, may lead anywhere; a file with a second hard link may be any
// file elsewhere on the machine. A path not there yet is plain: the call creates it. A
// root that cannot be read is not plain either, so a failure never passes a path. The
// sentence says what was found, for the member who then decides.
func Check(root, p string) string {
	if p == "" || path.IsAbs(p) || strings.ContainsAny(p, "\\\x00") || slices.Contains(strings.Split(p, "/"), "..") {
		return fmt.Sprintf("%.80q is absolute, empty or climbs out with \"..\"", p)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Sprintf("the root %.80q could not be opened to check %.80q", root, p)
	}
	defer r.Close()
	parts := strings.Split(path.Clean(p), "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		info, err := r.Lstat(sub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return ""
		case err != nil:
			return fmt.Sprintf("%.80q could not be checked", sub)
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Sprintf("%.80q is a symbolic link, which may lead anywhere", sub)
		case i == len(parts)-1 && !info.IsDir() && HardLinks(info) > 1:
			return fmt.Sprintf("%.80q has %d hard links, so it may be any file elsewhere on the machine", sub, HardLinks(info))
		}
	}
	return ""
}

// credentialNames are base names that hold keys and certificates a root may hold by
// accident; lower case, matched against a lower-cased name, since case-insensitive file
// systems (macOS, Windows) open Deploy.KEY as deploy.key.
var credentialNames = []string{"*.pem", "*.key", "*.p12", "*.pfx"}

// Credential reports whether the base name looks like a key or a certificate, in any
// letter case: *.pem, *.key, *.p12, *.pfx, or an SSH private key's name, id_ with no
// extension (id_rsa, id_ed25519, id_rsa_work). id_gen.go or id_test.go is source, not a
// key: the hook refuses a credential's path for every tool, so a pattern wider than keys
// would refuse a coding agent ordinary files no member can let it open.
func Credential(name string) bool {
	name = strings.ToLower(name)
	if strings.HasPrefix(name, "id_") && !strings.Contains(name, ".") {
		return true
	}
	for _, pat := range credentialNames {
		if ok, err := path.Match(pat, name); err == nil && ok {
			return true
		}
	}
	return false
}
