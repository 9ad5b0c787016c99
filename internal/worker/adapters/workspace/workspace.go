// Package workspace provides the built-in workspace adapter: list, count, search, read and
// write files inside a file Source's root, and nothing else.
package workspace

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/landing"
	"github.com/docketrun/docket/internal/worker"
)

// Defaults, used when a Tool's fence leaves them unset.
const (
	DefaultMaxBytes   = 1 << 20 // largest file read, written or searched, bytes
	DefaultMaxEntries = 10000   // most entries list and count walk
	DefaultMaxMatches = 1000    // most lines search returns
	DefaultTimeout    = 30 * time.Second
)

// Adapter runs the built-in docket.workspace.*@1 Tools. The zero value is ready; it is
// safe for concurrent use.
//
// Every path is relative to the Source root, which is opened with [os.Root], so no path,
// ".." or symbolic link can reach outside it. Absolute paths and ".." are refused before
// that, so a mistake gets a clear reason. Writes refuse to pass through a symbolic link
// anywhere on the path, are written to a temporary file and renamed into place, and never
// delete. Text and JSON reads refuse binary files; files over the cap are refused.
//
// Reads are fenced further: only regular files are opened, checked with Lstat
// before and Stat after a non-blocking open, so a FIFO or device never holds the call; a
// file with more than one hard link is refused, since its other name may be anywhere; the
// worker's own files in Protected are refused whatever the path; and hidden or credential
// paths (.env, .git/, *.pem, id_*, in any case) are refused unless the Source's vault
// entry allows them, while its deny patterns, matched in any case, always win. Listings leave out what a read would refuse.
// Every call runs under a deadline: the Tool's fence.timeoutMs, else DefaultTimeout.
type Adapter struct {
	// Protected names the worker's own files and directories (its vault, its manifest,
	// its data dir) that no call may read or replace, by any name.
	Protected []string

	// beforeRename, when set (by tests only), runs between the last check of a write and
	// its rename, where a concurrent symbolic-link swap would land.
	beforeRename func()
}

var (
	_ worker.Adapter     = Adapter{}
	_ worker.ToolChecker = Adapter{}
)

// CheckTool refuses a workspace Tool whose entry is not one of the built-in operations;
// delete, move and shell are named so their refusal says so.
func (Adapter) CheckTool(id contract.ToolID, t worker.Tool) error {
	switch t.Entry {
	case worker.OpList, worker.OpCount, worker.OpSearch, worker.OpReadText, worker.OpReadJSON, worker.OpHash, worker.OpWriteText, worker.OpWriteJSON:
		return nil
	}
	return contract.Errorf(contract.CodeWorkspaceForbidden, "tool %s asks the workspace for %.40q; it only lists, counts, searches, reads, hashes and writes files, and never deletes or runs a shell.", id, t.Entry)
}

// Execute runs one workspace operation.
func (a Adapter) Execute(ctx context.Context, c worker.Call) (worker.Outcome, error) {
	if err := a.CheckTool(c.Tool, c.Def); err != nil {
		return worker.Refuse(err)
	}
	if c.Source == nil || c.Source.Type != "file" {
		return worker.Refuse(contract.Errorf(contract.CodeSourceTypeMatch, "workspace tools run against a file Source; name one."))
	}
	root, err := os.OpenRoot(c.Source.Root)
	if err != nil {
		return worker.Refuse(fmt.Errorf("open source %s root: %w", c.Source.Name, err))
	}
	defer root.Close()
	fc, err := newFence(c.Source, a.Protected)
	if err != nil {
		return worker.Refuse(err)
	}
	ws := &space{root: root, fence: fc, max: DefaultMaxBytes, beforeRename: a.beforeRename}
	timeout := DefaultTimeout
	if f := c.Def.Fence; f != nil {
		if f.MaxBytes > 0 {
			ws.max = f.MaxBytes
		}
		if f.TimeoutMs > 0 {
			timeout = time.Duration(f.TimeoutMs) * time.Millisecond
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := clean(c.Args, "path")
	if err != nil {
		return worker.Refuse(err)
	}
	if err := fc.check(p); err != nil {
		return worker.Refuse(err)
	}
	switch c.Def.Entry {
	case worker.OpList:
		return result(ws.list(ctx, p))
	case worker.OpCount:
		return result(ws.count(ctx, p))
	case worker.OpSearch:
		return result(ws.search(ctx, p, c.Args["pattern"].Str()))
	case worker.OpReadText:
		return result(ws.readText(p))
	case worker.OpReadJSON:
		return result(ws.readJSON(p))
	case worker.OpHash:
		return result(ws.hash(p))
	case worker.OpWriteText:
		return ws.write(p, []byte(c.Args["text"].Str()))
	case worker.OpWriteJSON:
		obj := contract.Args{}
		for k, v := range c.Args {
			if k != "path" {
				obj[k] = v
			}
		}
		// Args marshals with sorted keys, so equal objects are equal files.
		b, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return worker.Refuse(fmt.Errorf("encode %s: %w", p, err))
		}
		return ws.write(p, append(b, '\n'))
	}
	return worker.Refuse(contract.Errorf(contract.CodeWorkspaceForbidden, "unknown workspace operation"))
}

func result(rows []contract.Args, err error) (worker.Outcome, error) {
	if err != nil {
		return worker.Refuse(err)
	}
	return worker.OK(rows...)
}

// clean returns args[name] as a clean slash path relative to the root ("." when absent),
// refusing absolute paths, ".." and NUL with workspace_path.
func clean(args contract.Args, name string) (string, error) {
	v, ok := args[name]
	if !ok || v.Str() == "" {
		return ".", nil
	}
	p := v.Str()
	if strings.ContainsRune(p, 0) || strings.Contains(p, `\`) {
		return "", contract.Errorf(contract.CodeWorkspacePath, "path %.80q holds a NUL or a backslash; use forward slashes.", p)
	}
	if path.IsAbs(p) {
		return "", contract.Errorf(contract.CodeWorkspacePath, "path %.80q is absolute; give a path relative to the Source root.", p)
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return "", contract.Errorf(contract.CodeWorkspacePath, "path %.80q climbs out with \"..\"; give a path inside the Source root.", p)
	}
	return path.Clean(p), nil
}

type space struct {
	root         *os.Root
	fence        *fence
	max          int64
	beforeRename func()
}

// fail maps a filesystem error on p to a coded refusal.
func fail(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &contract.Error{Code: contract.CodeWorkspaceNotFound, Teaching: fmt.Sprintf("%.80s does not exist in the Source; list the directory to find the file.", p), Err: err}
	case strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes"):
		return &contract.Error{Code: contract.CodeWorkspacePath, Teaching: fmt.Sprintf("%.80s leads outside the Source root (through a symbolic link); use a path inside it.", p), Err: err}
	}
	return fmt.Errorf("workspace %s: %w", p, err)
}

func (ws *space) list(ctx context.Context, p string) ([]contract.Args, error) {
	var rows []contract.Args
	err := ws.walk(ctx, p, func(name string, d fs.DirEntry, info fs.FileInfo) {
		kind := "file"
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			kind = "symlink"
		case d.IsDir():
			kind = "dir"
		}
		size, _ := contract.IntValue(info.Size())
		rows = append(rows, contract.Args{"path": contract.StringValue(name), "kind": contract.StringValue(kind), "size": size})
	})
	return rows, err
}

func (ws *space) count(ctx context.Context, p string) ([]contract.Args, error) {
	var files, dirs int64
	err := ws.walk(ctx, p, func(_ string, d fs.DirEntry, _ fs.FileInfo) {
		if d.IsDir() {
			dirs++
		} else {
			files++
		}
	})
	f, _ := contract.IntValue(files)
	dd, _ := contract.IntValue(dirs)
	return []contract.Args{{"files": f, "dirs": dd}}, err
}

// walk visits the entries under p (not p itself), without following symbolic links, up
// to DefaultMaxEntries. Entries the fence denies are left out, directories with all they
// hold.
func (ws *space) walk(ctx context.Context, p string, visit func(string, fs.DirEntry, fs.FileInfo)) error {
	n := 0
	err := fs.WalkDir(ws.root.FS(), p, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return fail(name, err)
		}
		if err := ctx.Err(); err != nil {
			return &contract.Error{Code: contract.CodeToolTimeout, Teaching: fmt.Sprintf("the walk of %.80s passed its time limit; name a smaller directory or raise fence.timeoutMs.", p), Err: err}
		}
		if name == p {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fail(name, err)
		}
		if ws.fence.check(name) != nil || ws.fence.protected(filepath.Join(ws.fence.realRoot, filepath.FromSlash(name)), info) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if n++; n > DefaultMaxEntries {
			return contract.Errorf(contract.CodeOutputTooBig, "%.80s holds over %d entries; name a smaller directory.", p, DefaultMaxEntries)
		}
		visit(name, d, info)
		return nil
	})
	return err
}

func (ws *space) search(ctx context.Context, p, pattern string) ([]contract.Args, error) {
	if pattern == "" {
		return nil, contract.Errorf(contract.CodeToolArgs, "search needs a non-empty pattern (a literal substring).")
	}
	var rows []contract.Args
	var stop error
	err := ws.walk(ctx, p, func(name string, d fs.DirEntry, info fs.FileInfo) {
		if stop != nil || !d.Type().IsRegular() || info.Size() > ws.max {
			return
		}
		b, err := ws.read(name)
		if err != nil || !isText(b) {
			return // unreadable, fenced or binary files are skipped by search, not fatal
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, pattern) {
				continue
			}
			if len(rows) == DefaultMaxMatches {
				stop = contract.Errorf(contract.CodeOutputTooBig, "search found over %d lines; use a narrower pattern or path.", DefaultMaxMatches)
				return
			}
			ln, _ := contract.IntValue(int64(i + 1))
			rows = append(rows, contract.Args{"path": contract.StringValue(name), "line": ln, "text": contract.StringValue(line)})
		}
	})
	if err == nil {
		err = stop
	}
	return rows, err
}

// read returns the bytes of the regular file p. It refuses, before opening, what is not a
// regular file (a FIFO would block the open), what the fence denies under its real name,
// and the worker's own files; after a non-blocking open it checks the open file again,
// refusing one with more than one hard link, one swapped since the check, and one over
// the cap.
func (ws *space) read(p string) ([]byte, error) {
	before, err := ws.root.Lstat(p)
	if err != nil {
		return nil, fail(p, err)
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		// os.Root follows a link only inside the root; Stat does not open, so it never blocks.
		if before, err = ws.root.Stat(p); err != nil {
			return nil, fail(p, err)
		}
	}
	if err := notRegular(p, before); err != nil {
		return nil, err
	}
	real := ws.fence.real(p)
	if r := ws.fence.rel(real); r != p {
		if err := ws.fence.check(r); err != nil {
			return nil, err // a link inside the root to a denied path
		}
	}
	if ws.fence.protected(real, before) {
		return nil, errProtected(p)
	}
	f, err := ws.root.OpenFile(p, readFlags, 0)
	if err != nil {
		return nil, fail(p, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fail(p, err)
	}
	if err := notRegular(p, info); err != nil {
		return nil, err
	}
	if !os.SameFile(before, info) {
		return nil, contract.Errorf(contract.CodeWorkspacePath, "%.80s changed while it was being read; read it again.", p)
	}
	if landing.HardLinks(info) > 1 {
		return nil, contract.Errorf(contract.CodeWorkspaceHardLink,
			"%.80s has %d hard links, so it may be any file elsewhere on the machine; the workspace reads only files with one link, so copy it instead.", p, landing.HardLinks(info))
	}
	if ws.fence.protected(real, info) {
		return nil, errProtected(p)
	}
	if info.Size() > ws.max {
		return nil, contract.Errorf(contract.CodeWorkspaceTooLarge, "%.80s is %d bytes, over the cap of %d; read a smaller file or raise the Tool's fence.maxBytes.", p, info.Size(), ws.max)
	}
	// Read one byte past the cap: the file may have grown since Stat.
	b, err := io.ReadAll(io.LimitReader(f, ws.max+1))
	if err != nil {
		return nil, fail(p, err)
	}
	if int64(len(b)) > ws.max {
		return nil, contract.Errorf(contract.CodeWorkspaceTooLarge, "%.80s is over the cap of %d bytes; read a smaller file.", p, ws.max)
	}
	return b, nil
}

// notRegular refuses what is not a regular file: a directory, FIFO, socket or device.
func notRegular(p string, info fs.FileInfo) error {
	switch {
	case info.IsDir():
		return contract.Errorf(contract.CodeWorkspacePath, "%.80s is a directory, not a regular file; name a file, or list the directory.", p)
	case !info.Mode().IsRegular():
		return contract.Errorf(contract.CodeWorkspaceSpecial, "%.80s is not a regular file (a FIFO, socket or device); the workspace reads only regular files.", p)
	}
	return nil
}

func errProtected(p string) error {
	return contract.Errorf(contract.CodeWorkspaceProtected, "%.80s is one of the worker's own files (its vault, manifest or data dir); the workspace never reads or replaces them.", p)
}

// isText reports whether b is UTF-8 without NUL bytes.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

func (ws *space) readText(p string) ([]contract.Args, error) {
	b, err := ws.read(p)
	if err != nil {
		return nil, err
	}
	if !isText(b) {
		return nil, contract.Errorf(contract.CodeWorkspaceBinary, "%.80s is binary (NUL bytes or invalid UTF-8); use hash for binary files.", p)
	}
	return []contract.Args{{"path": contract.StringValue(p), "text": contract.StringValue(string(b))}}, nil
}

// readJSON returns the file's top-level object as one row.
func (ws *space) readJSON(p string) ([]contract.Args, error) {
	b, err := ws.read(p)
	if err != nil {
		return nil, err
	}
	if !isText(b) {
		return nil, contract.Errorf(contract.CodeWorkspaceBinary, "%.80s is binary, not JSON.", p)
	}
	row, err := worker.Row(b)
	if err != nil {
		return nil, &contract.Error{Code: contract.CodeWorkspaceJSON, Teaching: fmt.Sprintf("%.80s is not one JSON object; read_json returns a file's top-level object as one row.", p), Err: err}
	}
	return []contract.Args{row}, nil
}

func (ws *space) hash(p string) ([]contract.Args, error) {
	b, err := ws.read(p)
	if err != nil {
		return nil, err
	}
	return []contract.Args{digestRow(p, b)}, nil
}

func digestRow(p string, b []byte) contract.Args {
	sum := sha256.Sum256(b)
	size, _ := contract.IntValue(int64(len(b)))
	return contract.Args{"path": contract.StringValue(p), "sha256": contract.StringValue(hex.EncodeToString(sum[:])), "size": size}
}

// write replaces p with b: into a new temporary file beside it, then renamed over it, so
// a reader sees the old file or the new one, never half of one.
func (ws *space) write(p string, b []byte) (worker.Outcome, error) {
	if p == "." {
		return worker.Refuse(contract.Errorf(contract.CodeWorkspacePath, "a write needs a file path, not the Source root."))
	}
	if int64(len(b)) > ws.max {
		return worker.Refuse(contract.Errorf(contract.CodeWorkspaceTooLarge, "the content is %d bytes, over the cap of %d.", len(b), ws.max))
	}
	if err := ws.noSymlinks(p); err != nil {
		return worker.Refuse(err)
	}
	real := ws.fence.real(p)
	existing, err := os.Lstat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		existing = nil // a new file: only its directory can be protected
	case err != nil:
		return worker.Refuse(fail(p, err))
	}
	if ws.fence.protected(real, existing) {
		return worker.Refuse(errProtected(p))
	}
	if dir := path.Dir(p); dir != "." {
		if err := ws.root.MkdirAll(dir, 0o755); err != nil {
			return worker.Refuse(fail(dir, err))
		}
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(p), ".docket-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := ws.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return worker.Refuse(fail(p, err))
	}
	_, werr := f.Write(b)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		ws.root.Remove(tmp)
		return worker.Refuse(fail(p, err))
	}
	// Check again just before the rename: a symbolic link swapped in meanwhile is refused.
	// os.Root keeps even a lost race inside the root.
	if err := ws.noSymlinks(p); err != nil {
		ws.root.Remove(tmp)
		return worker.Refuse(err)
	}
	if ws.beforeRename != nil {
		ws.beforeRename()
	}
	if err := ws.root.Rename(tmp, p); err != nil {
		// rename(2) is atomic: when it fails, p was not replaced.
		ws.root.Remove(tmp)
		return worker.Refuse(fail(p, err))
	}
	return worker.OK(digestRow(p, b))
}

// noSymlinks refuses p when it or any directory on the way to it is a symbolic link.
func (ws *space) noSymlinks(p string) error {
	parts := strings.Split(p, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		info, err := ws.root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fail(sub, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return contract.Errorf(contract.CodeWorkspaceSymlink, "%.80s is a symbolic link; workspace writes never go through links, write to a plain path.", sub)
		}
		if i < len(parts)-1 && !info.IsDir() {
			return contract.Errorf(contract.CodeWorkspacePath, "%.80s is a file, so %.80s cannot be created under it.", sub, p)
		}
		if i == len(parts)-1 && !info.Mode().IsRegular() {
			return contract.Errorf(contract.CodeWorkspacePath, "%.80s exists and is not a regular file; write to a file path.", p)
		}
	}
	return nil
}
