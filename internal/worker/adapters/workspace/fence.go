package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/landing"
	"github.com/docketrun/docket/internal/worker"
)

// fence is what one call may touch besides what os.Root already confines: the Source's
// path policy and the worker's own files. It is built once per call.
type fence struct {
	realRoot string        // the Source root with every symbolic link resolved
	files    []fs.FileInfo // the worker's own files (vault, manifest): never read or replaced
	dirs     []string      // real paths of protected directories the root does not sit inside
	allow    []string      // the Source's allow patterns, for hidden and credential paths
	deny     []string      // the Source's deny patterns; deny wins
}

// newFence resolves the Source root and the protected paths. A protected path that does
// not exist protects nothing. A protected directory that strictly holds the root is left
// to os.Root, which keeps every path inside the root; one the root holds, or equals, is
// fenced here.
func newFence(src *worker.Source, protected []string) (*fence, error) {
	real, err := filepath.EvalSymlinks(src.Root)
	if err != nil {
		return nil, fmt.Errorf("resolve source %s root: %w", src.Name, err)
	}
	f := &fence{realRoot: real, allow: src.Allow, deny: src.Deny}
	for _, p := range protected {
		info, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !info.IsDir() {
			f.files = append(f.files, info)
			continue
		}
		rp, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if real != rp && within(real, rp) {
			continue
		}
		f.dirs = append(f.dirs, rp)
	}
	return f, nil
}

// within reports whether p is dir or lies under it; both are clean absolute paths.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// protected reports whether the file at real path p, with info, is one of the worker's
// own: the same file as its vault or manifest (under any name), or inside its data dir.
func (f *fence) protected(p string, info fs.FileInfo) bool {
	for _, pf := range f.files {
		if info != nil && os.SameFile(pf, info) {
			return true
		}
	}
	for _, d := range f.dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// real returns the real path of slash path p under the root, resolving symbolic links of
// the longest part that exists.
func (f *fence) real(p string) string {
	full := filepath.Join(f.realRoot, filepath.FromSlash(p))
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(full); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(full)
		if parent == full {
			return filepath.Join(full, rest)
		}
		rest = filepath.Join(filepath.Base(full), rest)
		full = parent
	}
}

// rel returns the slash path of real path p relative to the root, or "" when p is
// outside it.
func (f *fence) rel(p string) string {
	r, err := filepath.Rel(f.realRoot, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(r)
}

// check refuses p when the Source's policy denies it: a deny pattern matches, or a hidden
// or credential part of it is matched by no allow pattern. p is a clean slash path.
//
// Deny patterns and the credential names match without regard to case: on a
// case-insensitive file system (macOS, Windows) keys/Deploy.KEY and Secrets/ are the
// files *.key and secrets/ mean, and a case-sensitive one holds no file a person would
// name in another case to keep it readable. Allow patterns match as written: an
// exemption is never wider than what a person wrote (docs/workers.md, Fences).
func (f *fence) check(p string) error {
	if p == "." || p == "" {
		return nil
	}
	parts := strings.Split(p, "/")
	for i, part := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		if matchAny(f.deny, prefix, part, foldCase) {
			return contract.Errorf(contract.CodeWorkspaceHidden, "%.80s is denied by the Source's deny list in the worker's vault.", p)
		}
		if sensitive(part) && !matchAny(f.allow, prefix, part, exactCase) {
			return contract.Errorf(contract.CodeWorkspaceHidden,
				"%.80s is a hidden or credential path (.env, .git/, *.pem, id_*, in any case), denied by default; a person may list it in the Source's \"allow\" in the worker's vault.", p)
		}
	}
	return nil
}

// sensitive reports whether one part of a path is hidden or looks like a credential, in
// any case.
func sensitive(part string) bool {
	if strings.HasPrefix(part, ".") && part != "." {
		return true
	}
	return landing.Credential(part)
}

// How [matchAny] compares letters.
const (
	exactCase = false
	foldCase  = true
)

// matchAny reports whether a pattern matches prefix (a path from the root) or, for a
// pattern without '/', the single part; with fold, without regard to case. A trailing
// '/' marks a directory and is ignored.
func matchAny(patterns []string, prefix, part string, fold bool) bool {
	if fold {
		prefix, part = strings.ToLower(prefix), strings.ToLower(part)
	}
	for _, pat := range patterns {
		pat = strings.TrimSuffix(pat, "/")
		if fold {
			pat = strings.ToLower(pat)
		}
		// A malformed pattern matches nothing; the vault refuses one when it loads.
		if ok, err := path.Match(pat, prefix); err == nil && ok {
			return true
		}
		if !strings.Contains(pat, "/") {
			if ok, err := path.Match(pat, part); err == nil && ok {
				return true
			}
		}
	}
	return false
}
