package event_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
)

// TestGoldenFilesCoverCatalog wants one golden file of stored bytes for every type of the
// catalog, and none for a type it does not list: the files are what events already in a
// data dir look like, so that a change of a payload struct is seen against them.
func TestGoldenFilesCoverCatalog(t *testing.T) {
	listed := map[string]bool{}
	for _, k := range event.Catalog {
		listed[k.Type] = true
		b, err := os.ReadFile(filepath.Join("testdata", k.Type+".json"))
		if err != nil {
			t.Errorf("%s has no golden file: %v", k.Type, err)
			continue
		}
		if !json.Valid(b) {
			t.Errorf("testdata/%s.json is not JSON", k.Type)
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if typ := strings.TrimSuffix(filepath.Base(f), ".json"); !listed[typ] {
			t.Errorf("%s is the golden file of %s, which the catalog does not list", f, typ)
		}
	}
}
