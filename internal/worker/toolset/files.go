// Package toolset adds Tools and Sources to a worker's manifest and vault, so that a
// person brings a tool of their own under Docket without writing either file by hand: an
// MCP server (a stdio command or a Streamable HTTP endpoint) and the tools discovered on
// it, and the templates for a folder, an HTTP API, a SQL query and a local script
// (docs/workers.md, "Bringing your own tools").
//
// Every function validates its input and refuses with a stable code and a sentence that
// names the field and the fix. Secrets (a server's environment values and headers, an
// API's auth header, a DSN) are written into the vault only, which stays 0600; the manifest
// never holds one, and no error quotes one. Each add returns the Source binding the caller
// must make in the authority and the Tools to lock. The manifest and the vault are
// replaced by renaming a complete new file into place, so a worker watching them never
// reads half of one (it reloads both when they change).
package toolset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/dbquery"
	httpadapter "github.com/docketrun/docket/internal/worker/adapters/http"
	runadapter "github.com/docketrun/docket/internal/worker/adapters/run"
)

// Files are the two files a worker reads: its manifest and its vault. Either is created
// when absent (the vault with mode 0600).
type Files struct {
	Manifest string // the docket-worker-tools/1 manifest
	Vault    string // the Source vault
	// Root is the worker root run programs live under (docket worker --root); "" is the
	// manifest's directory, as for the worker.
	Root string
}

// Binding is the Source binding the caller must make in the authority (docket source
// bind, or the console's Sources form): its name and type, and the predicates it may
// attest, offered from the Tools' returns. Words is empty when no Tool declares returns
// that are predicate names; the person then names them.
type Binding struct {
	Name  string   `json:"name"`
	Type  string   `json:"type"`
	Words []string `json:"words"`
}

// Added is what one add wrote: the Source to bind (nil when the Tools are source-free) and
// the Tools to lock, sorted.
type Added struct {
	Source *Binding          `json:"source,omitempty"`
	Tools  []contract.ToolID `json:"tools"`
}

// edits serialises this process's edits; [lockEdits] serialises processes' (on Unix), so
// no edit is lost to another made at the same time. The worker never sees a half-written
// file either way.
var edits sync.Mutex

// manifestDoc is a manifest as edited: the Tools already there are kept as written.
type manifestDoc struct {
	Format string                     `json:"format"`
	Tools  map[string]json.RawMessage `json:"tools"`
}

// vaultDoc is a vault as edited: the Sources already there are kept as written.
type vaultDoc struct {
	Sources map[string]json.RawMessage `json:"sources"`
}

// vaultEntry is one new Source as written into the vault, secrets in the clear: unlike
// worker.Source, whose secrets marshal as "[redacted]", it exists to be written.
type vaultEntry struct {
	Type    string            `json:"type"`
	Root    string            `json:"root,omitempty"`
	URL     string            `json:"url,omitempty"`
	DSN     string            `json:"dsn,omitempty"`
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Deny    []string          `json:"deny,omitempty"`
}

// change is one edit: the Tools to add to the manifest and the Source to add to the vault.
type change struct {
	tools  map[contract.ToolID]worker.Tool
	source string // "" when the vault is not changed
	entry  vaultEntry
}

// checkers are the adapters whose ToolChecker the worker runs on a manifest: an added
// Tool is checked as the worker will check it.
func checkers() map[string]worker.Adapter {
	db := &dbquery.Adapter{}
	return map[string]worker.Adapter{
		worker.AdapterHTTP:         &httpadapter.Adapter{},
		worker.AdapterDBQuery:      db,
		worker.AdapterDBExecFenced: db,
		worker.AdapterRun:          &runadapter.Adapter{},
	}
}

// apply makes the change: the Tools must be new to the manifest and the Source new to the
// vault; the manifest and vault that result must load as the worker loads them. The vault
// is written first, so no Tool is ever in the manifest before its Source is in the vault.
func (f Files) apply(c change) error {
	if f.Manifest == "" {
		return fieldErr("manifest", "the path of the worker's manifest is empty; pass the file the worker runs with (docket worker --manifest).")
	}
	if c.source != "" && f.Vault == "" {
		return fieldErr("vault", "the path of the worker's vault is empty; pass the file the worker runs with (docket worker --vault).")
	}
	edits.Lock()
	defer edits.Unlock()
	if err := os.MkdirAll(filepath.Dir(f.Manifest), 0o700); err != nil {
		return fmt.Errorf("lock the worker's files: %w", err)
	}
	unlock, err := lockEdits(filepath.Join(filepath.Dir(f.Manifest), "."+filepath.Base(f.Manifest)+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	var mb []byte
	if len(c.tools) > 0 {
		m, err := readManifest(f.Manifest)
		if err != nil {
			return err
		}
		for id, t := range c.tools {
			if _, ok := m.Tools[string(id)]; ok {
				return contract.Errorf(contract.CodeToolExists, "tool %s is already in %s; give the new definition a new version (%s) or another name.", id, f.Manifest, nextVersion(id))
			}
			raw, err := json.Marshal(t)
			if err != nil {
				return fmt.Errorf("encode tool %s: %w", id, err)
			}
			m.Tools[string(id)] = raw
		}
		if mb, err = json.MarshalIndent(m, "", "  "); err != nil {
			return fmt.Errorf("encode the manifest: %w", err)
		}
		mb = append(mb, '\n')
		if _, err := worker.ParseManifest(mb, checkers()); err != nil {
			return err
		}
	}
	if c.source != "" {
		v, err := readVault(f.Vault)
		if err != nil {
			return err
		}
		if _, ok := v.Sources[c.source]; ok {
			return contract.Errorf(contract.CodeSourceExists, "source %s is already in the vault %s; choose another name, or edit that entry in the vault.", c.source, f.Vault)
		}
		raw, err := json.Marshal(c.entry)
		if err != nil {
			return fmt.Errorf("encode source %s: %w", c.source, err)
		}
		v.Sources[c.source] = raw
		vb, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("encode the vault: %w", err)
		}
		vb = append(vb, '\n')
		if _, err := worker.ParseVault(vb); err != nil {
			return err // its errors quote keys only, never a value
		}
		if err := replace(f.Vault, vb, 0o600); err != nil {
			return fmt.Errorf("write the vault: %w", err)
		}
	}
	if mb == nil {
		return nil
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(f.Manifest); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := replace(f.Manifest, mb, mode); err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	return nil
}

// readManifest reads the manifest at path, or an empty one when there is none. A
// manifest the worker would refuse is refused here too: fix it before adding to it.
func readManifest(path string) (*manifestDoc, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &manifestDoc{Format: worker.ManifestFormat, Tools: map[string]json.RawMessage{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	if _, err := worker.ParseManifest(b, checkers()); err != nil {
		if ce, ok := errors.AsType[*contract.Error](err); ok {
			return nil, &contract.Error{Code: ce.Code, Teaching: "fix " + path + " before adding to it: " + ce.Teaching, Err: err}
		}
		return nil, fmt.Errorf("the manifest %s: %w", path, err)
	}
	var m manifestDoc
	if err := contract.DecodeStrict(b, &m); err != nil {
		return nil, fmt.Errorf("the manifest %s: %w", path, err)
	}
	if m.Tools == nil {
		m.Tools = map[string]json.RawMessage{}
	}
	return &m, nil
}

// readVault reads the vault at path, or an empty one when there is none. A vault the
// worker would refuse (readable by others, malformed) is refused here too.
func readVault(path string) (*vaultDoc, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return &vaultDoc{Sources: map[string]json.RawMessage{}}, nil
	}
	if _, err := worker.LoadVault(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the vault: %w", err)
	}
	var v vaultDoc
	if err := contract.DecodeStrict(b, &v); err != nil {
		return nil, contract.Errorf(contract.CodeVaultInvalid, "the vault %s is not valid; fix it before adding to it.", path)
	}
	if v.Sources == nil {
		v.Sources = map[string]json.RawMessage{}
	}
	return &v, nil
}

// replace writes b to a new file beside path with mode and renames it into place, so a
// reader sees the old file or the new one, never part of either.
func replace(path string, b []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

// fieldErr is the refusal of one input field, naming it and the fix.
func fieldErr(field, fix string) error {
	return contract.Errorf(contract.CodeTemplateField, "%s: %s", field, fix)
}

// nextVersion is id with its version one higher, for the fix of a Tool already there.
func nextVersion(id contract.ToolID) string {
	name, ver, _ := bytes.Cut([]byte(id), []byte("@"))
	n := 0
	for _, c := range ver {
		n = n*10 + int(c-'0')
	}
	return fmt.Sprintf("%s@%d", name, n+1)
}

// wordsOf returns the words a Source may attest, as offered, sorted and without repeats:
// the predicates of a Tool's facts when it maps its rows to facts, else its returns that
// are predicate names.
func wordsOf(tools map[contract.ToolID]worker.Tool) []string {
	words := []string{}
	for _, t := range tools {
		for _, f := range t.Facts {
			if !slices.Contains(words, f.Predicate) {
				words = append(words, f.Predicate)
			}
		}
		if len(t.Facts) > 0 {
			continue // its facts say what its rows are; its columns are no words
		}
		for _, r := range t.Returns {
			if isPredicate(r) && !slices.Contains(words, r) {
				words = append(words, r)
			}
		}
	}
	slices.Sort(words)
	return words
}

// isPredicate reports whether s is a predicate name: lower-case letters, digits and '_',
// starting with a letter, as the authority takes a Source's words.
func isPredicate(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '_')) {
			return false
		}
	}
	return true
}

// sortedIDs returns the ids of tools, sorted.
func sortedIDs(tools map[contract.ToolID]worker.Tool) []contract.ToolID {
	ids := make([]contract.ToolID, 0, len(tools))
	for id := range tools {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
