package engine_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestDeps keeps the engine pure: the standard library and contract only,
// and nothing that reads the outside world or breaks determinism.
func TestDeps(t *testing.T) {
	t.Parallel()
	forbidden := map[string]string{
		"os":           "the engine is pure: no I/O",
		"io/fs":        "the engine is pure: no files",
		"net":          "the engine is pure: no network",
		"time":         "the engine is pure: evaluation never depends on the clock",
		"math/rand":    "the engine is deterministic: derived ids come from atoms",
		"math/rand/v2": "the engine is deterministic: derived ids come from atoms",
		"crypto/rand":  "the engine is deterministic: derived ids come from atoms",
		"log":          "the engine returns errors; its callers log",
		"log/slog":     "the engine returns errors; its callers log",
		"sync":         "an Engine is not safe for concurrent use; the Board serializes",
		"unsafe":       "the engine needs no unsafe",
	}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if why, bad := forbidden[imp]; bad {
			t.Errorf("engine imports %s: %s", imp, why)
		}
		if strings.Contains(strings.Split(imp, "/")[0], ".") && imp != "github.com/docketrun/docket/internal/contract" {
			t.Errorf("engine imports %s: it depends only on the standard library and contract", imp)
		}
	}
}
