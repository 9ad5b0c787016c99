package capability

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
)

// Size limits of a package, so that a hostile tarball cannot exhaust memory.
const (
	MaxFileSize  = 1 << 20  // bytes in one file
	MaxTotalSize = 16 << 20 // bytes in all files
	MaxFiles     = 1000     // entries in a tarball
)

// Package is a validated capability: its release, what it declares for a Board, and the
// files its digest covers.
type Package struct {
	Release      Release
	Title        string
	Description  string
	Declarations board.Declarations
	Files        []string // the digested files, sorted
}

// Load reads and validates the capability in directory dir. The error, if any, is a
// *contract.Error whose cause is [Problems], listing everything wrong at once.
func Load(dir string) (*Package, error) {
	return LoadFS(os.DirFS(dir))
}

// LoadFS reads and validates the capability at the root of fsys.
func LoadFS(fsys fs.FS) (*Package, error) {
	files := map[string][]byte{}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, contract.Errorf(contract.CodeCapabilityInvalid, "the capability directory cannot be read (%v); pass a directory holding capability.toml", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !digested(e.Name()) {
			continue
		}
		b, err := readLimited(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		files[e.Name()] = b
	}
	return Check(files)
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > MaxFileSize {
		return nil, contract.Errorf(contract.CodeCapabilityInvalid, "%s is larger than %d bytes; split it", name, MaxFileSize)
	}
	return b, nil
}

// LoadTarball reads and validates a capability from a gzip-compressed tar stream. The
// archive holds the package's files at its root or inside one top-level directory; only
// regular files and directories are accepted.
func LoadTarball(r io.Reader) (*Package, error) {
	refuse := func(format string, args ...any) error {
		return contract.Errorf(contract.CodeCapabilityInvalid, "the tarball "+format, args...)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, refuse("is not gzip-compressed (%v); create it with tar czf", err)
	}
	tr := tar.NewReader(zr)
	raw := map[string][]byte{}
	total := 0
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, refuse("cannot be read (%v); recreate it with tar czf", err)
		}
		if n >= MaxFiles {
			return nil, refuse("has more than %d entries; package only the capability", MaxFiles)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, refuse("holds %s, which is not a regular file; package only files", h.Name)
		}
		if !fs.ValidPath(name) {
			return nil, refuse("holds the path %q, which leaves the package; use relative paths inside it", h.Name)
		}
		if h.Size > MaxFileSize || total+int(h.Size) > MaxTotalSize {
			return nil, refuse("holds more than the limits (%d bytes a file, %d in all); package only the capability", MaxFileSize, MaxTotalSize)
		}
		b, err := io.ReadAll(io.LimitReader(tr, MaxFileSize+1))
		if err != nil {
			return nil, refuse("cannot be read (%v)", err)
		}
		total += len(b)
		if _, dup := raw[name]; dup {
			return nil, refuse("holds %s twice; package each file once", name)
		}
		raw[name] = b
	}
	// Strip one wrapping directory when every file sits in the same one.
	prefix := ""
	for name := range raw {
		dir, _, ok := strings.Cut(name, "/")
		if !ok || prefix != "" && dir != prefix {
			prefix = ""
			break
		}
		prefix = dir
	}
	files := map[string][]byte{}
	for name, b := range raw {
		if prefix != "" {
			name = strings.TrimPrefix(name, prefix+"/")
		}
		if digested(name) {
			files[name] = b
		}
	}
	return Check(files)
}

// digested reports whether a file belongs to the package's content: capability.toml or a
// top-level *.dl file.
func digested(name string) bool {
	if strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		return false
	}
	return name == ManifestFile || strings.HasSuffix(name, ".dl")
}

// Check validates a package given as its files (name → content) and returns it converted.
// Only capability.toml and top-level *.dl files are read and digested; others are ignored.
func Check(files map[string][]byte) (*Package, error) {
	src, ok := files[ManifestFile]
	if !ok {
		return nil, contract.Errorf(contract.CodeCapabilityInvalid, "the package has no %s; add one with id, version and title", ManifestFile)
	}
	var names []string
	for name := range files {
		if digested(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	v := &validation{loc: newLocator(src)}
	m, ok := decodeManifest(src, v.loc, &v.checker)
	if !ok {
		return nil, v.problems.asError()
	}
	v.m = m
	var rules [][]syntax.Statement
	for _, name := range names {
		if name == ManifestFile {
			continue
		}
		stmts, errs := syntax.ParseAll(name, normalize(files[name]))
		for _, err := range errs {
			v.addErr("", err)
		}
		if len(errs) == 0 {
			rules = append(rules, stmts)
		}
	}
	v.validate(rules)
	if err := v.problems.asError(); err != nil {
		return nil, err
	}
	d := digest(names, files)
	v.decl.Digest = d
	return &Package{
		Release:      Release{ID: m.ID, Version: m.Version, Digest: d},
		Title:        m.Title,
		Description:  m.Description,
		Declarations: v.decl,
		Files:        names,
	}, nil
}
