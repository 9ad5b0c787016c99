package console_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/docketrun/docket/internal/authority/opclass"
)

// TestOperationTable_EveryChangingRoute checks the one table of operation classes against
// the routes the console serves: every changing route has a class, and every class names a
// route that is served, so a new route cannot reach a delegate unclassed.
func TestOperationTable_EveryChangingRoute(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	route := regexp.MustCompile(`s\.handle\("((?:POST|PUT|DELETE|PATCH) [^"]+)"`)
	var served []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range route.FindAllSubmatch(b, -1) {
			served = append(served, string(m[1]))
		}
	}
	if len(served) == 0 {
		t.Fatal("found no changing routes")
	}
	var classed []string
	for _, op := range opclass.Table {
		classed = append(classed, op.Route)
	}
	for _, p := range served {
		if !slices.Contains(classed, p) {
			t.Errorf("route %q has no class in opclass.Table", p)
		}
	}
	for _, p := range classed {
		if !slices.Contains(served, p) {
			t.Errorf("opclass.Table names %q, which the console does not serve", p)
		}
	}
}
