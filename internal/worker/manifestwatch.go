package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// SetManifest makes m the manifest every later Descriptors and Prepare read, so the next
// poll advertises its Tools; rows prepared before keep the definition they checked. It
// clears the problem [Executor.ManifestProblem] reports. m must not be nil.
func (e *Executor) SetManifest(m *Manifest) {
	if m != nil {
		e.manifest.Store(m)
		e.manifestProblem.Store(nil)
	}
}

// ManifestProblem says why the manifest file's last edit is not in use ("" when it is):
// the worker kept the manifest it had, and says so until a good edit replaces it.
func (e *Executor) ManifestProblem() string {
	if p := e.manifestProblem.Load(); p != nil {
		return *p
	}
	return ""
}

// WatchManifest reloads the manifest at path into e as [Executor.WatchVault] reloads the
// vault: on each signal from hup and each change of the file, parsed with checkers as at
// start. A manifest that does not load keeps the one in use, is logged with why, and is
// reported by [Executor.ManifestProblem] until an edit that loads replaces it. Tools
// added, changed or removed are advertised on the next poll; a changed Tool has a new
// digest and runs only once locked at it.
func (e *Executor) WatchManifest(ctx context.Context, path string, checkers map[string]Adapter, hup <-chan os.Signal, poll time.Duration) {
	e.watch(ctx, "manifest", path, hup, poll, func() (slog.Attr, error) {
		m, err := LoadManifest(path, checkers)
		if err != nil {
			why := err.Error()
			e.manifestProblem.Store(&why)
			return slog.Attr{}, err
		}
		e.SetManifest(m)
		return slog.Int(logTools, len(m.tools)), nil
	})
}

// LoadManifest reads and parses the manifest at path, at most [MaxManifestBytes]; a
// refusal names the file and the fix.
func LoadManifest(path string, checkers map[string]Adapter) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the tool manifest: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the tool manifest: %w", err)
	}
	m, err := ParseManifest(b, checkers)
	if err != nil {
		return nil, NameManifest(path, err)
	}
	return m, nil
}

// NameManifest names the manifest file at path in a refusal of it, as the fix: "fix
// /home/ada/.docket/tools.json: unknown field …", so that a line quoted from the worker's
// log says what to edit (docs/workbench.md).
func NameManifest(path string, err error) error {
	if ce, ok := errors.AsType[*contract.Error](err); ok {
		return &contract.Error{Code: ce.Code, Teaching: "fix " + path + ": " + strings.TrimSuffix(ce.Teaching, "."), Err: err}
	}
	return fmt.Errorf("the tool manifest %s: %w", path, err)
}
