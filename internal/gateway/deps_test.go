package gateway_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestDeps keeps the gateway an edge (STYLE.md §1): MCP in, authority calls out, never
// the store.
func TestDeps(t *testing.T) {
	forbidden := map[string]string{
		"database/sql": "the gateway calls the authority, never a database",
		"github.com/docketrun/docket/internal/store":          "the gateway calls the authority, never the store",
		"github.com/docketrun/docket/internal/store/sqlite":   "only cmd/docket names a concrete store",
		"github.com/docketrun/docket/internal/store/postgres": "only cmd/docket names a concrete store",
		"github.com/docketrun/docket/internal/board":          "the gateway has no Board rules of its own; the authority runs the Board",
	}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if why, bad := forbidden[imp]; bad {
			t.Errorf("gateway imports %s: %s", imp, why)
		}
		if strings.HasPrefix(imp, "github.com/docketrun/docket/internal/worker") || strings.HasPrefix(imp, "github.com/docketrun/docket/internal/agent") {
			t.Errorf("gateway imports %s: workers and agents reach the authority only over the wire", imp)
		}
	}
}
