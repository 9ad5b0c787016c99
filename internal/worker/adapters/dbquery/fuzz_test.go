package dbquery_test

import (
	"encoding/json"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/dbquery"
)

// FuzzCheckTool feeds SQL templates through manifest loading: each is accepted or refused
// with a code, and none panics.
func FuzzCheckTool(f *testing.F) {
	for _, s := range []string{"SELECT 1", "SELECT * FROM t WHERE a = {a}", "SELECT 'x;y' -- c\n", "DELETE FROM t",
		"SELECT $q$;$q$", "UPDATE t SET a = {a} WHERE id = {a}; ", "/* x */ SELECT \"a\"\"b\" FROM t", "{", "}"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	a := &dbquery.Adapter{}
	checkers := map[string]worker.Adapter{worker.AdapterDBQuery: a, worker.AdapterDBExecFenced: a}
	f.Fuzz(func(t *testing.T, entry string, query bool) {
		adapter := worker.AdapterDBExecFenced
		if query {
			adapter = worker.AdapterDBQuery
		}
		def, _ := json.Marshal(map[string]any{"adapter": adapter, "sourceTypes": []string{"db"}, "entry": entry,
			"params": map[string]any{"a": map[string]string{"type": "string"}}})
		_, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.db@1":`+string(def)+`}}`), checkers)
		if err != nil && contract.CodeOf(err) == "" {
			t.Fatalf("ParseManifest(%q) = %v, want a coded refusal", entry, err)
		}
	})
}
