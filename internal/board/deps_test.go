package board_test

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeps keeps the Board pure (DESIGN.md §12): no I/O, no clock, no randomness, and no
// Docket package but the contract and the engine.
func TestDeps(t *testing.T) {
	forbidden := map[string]string{
		"os":            "board is pure: no I/O",
		"os/exec":       "board is pure: no processes",
		"io/fs":         "board is pure: no files",
		"net":           "board is pure: no network",
		"net/http":      "board is pure: no network",
		"database/sql":  "board is pure: the store persists nodes",
		"math/rand":     "board is deterministic: ids come from content and counters",
		"math/rand/v2":  "board is deterministic: ids come from content and counters",
		"crypto/rand":   "board is deterministic: ids come from content and counters",
		"log":           "board returns errors; its callers log",
		"log/slog":      "board returns errors; its callers log",
		"sync":          "board is not safe for concurrent use; the authority serializes",
		"unsafe":        "board needs no unsafe",
		"path/filepath": "board is pure: no files",
	}
	allowedInternal := map[string]bool{
		"github.com/docketrun/docket/internal/contract":     true,
		"github.com/docketrun/docket/internal/board/engine": true,
	}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if why, bad := forbidden[imp]; bad {
			t.Errorf("board imports %s: %s", imp, why)
		}
		if strings.HasPrefix(imp, "github.com/docketrun/docket/") && !allowedInternal[imp] {
			t.Errorf("board imports %s: board depends only on contract and engine", imp)
		}
		if strings.Contains(imp, ".") && !strings.HasPrefix(imp, "github.com/docketrun/docket/") {
			t.Errorf("board imports %s: board uses only the standard library", imp)
		}
	}
	for _, f := range pkg.GoFiles {
		src, err := os.ReadFile(filepath.Join(".", f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "time.Now(") {
			t.Errorf("%s calls time.Now: the Board receives time as an argument", f)
		}
	}
}
