package dbquery_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/dbquery"
	"github.com/google/go-cmp/cmp"
)

var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

func str(s string) contract.Value { return contract.StringValue(s) }

func num(t testing.TB, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const schema = `CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total INTEGER NOT NULL, note TEXT)`

var seed = []string{
	`INSERT INTO orders (id, customer, total, note) VALUES (1, 'ada', 1200, 'first')`,
	`INSERT INTO orders (id, customer, total, note) VALUES (2, 'ada', 800, NULL)`,
	`INSERT INTO orders (id, customer, total, note) VALUES (3, 'bob', 500, 'x''; DROP TABLE orders; --')`,
}

// sources returns a seeded db Source per available engine: a SQLite file always, and a
// fresh PostgreSQL database when DOCKET_TEST_POSTGRES names a server (dropped after).
func sources(t *testing.T) map[string]*worker.Source {
	t.Helper()
	out := map[string]*worker.Source{}
	p := filepath.Join(t.TempDir(), "orders.db")
	out["sqlite"] = &worker.Source{Name: "orders", Type: "db", DSN: worker.Secret("sqlite:" + p)}
	seedDB(t, "sqlite", p)
	if dsn := os.Getenv("DOCKET_TEST_POSTGRES"); dsn != "" {
		out["postgres"] = &worker.Source{Name: "orders", Type: "db", DSN: worker.Secret(freshPostgres(t, dsn))}
	} else {
		t.Log("DOCKET_TEST_POSTGRES is not set; PostgreSQL cases skipped")
	}
	return out
}

func seedDB(t *testing.T, driver, dsn string) {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append([]string{schema}, seed...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func freshPostgres(t *testing.T, dsn string) string {
	t.Helper()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	rand.Read(b[:])
	name := "docket_dbquery_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	seedDB(t, "pgx", u.String())
	return u.String()
}

func tool(t *testing.T, a *dbquery.Adapter, js string) (contract.ToolID, worker.Tool) {
	t.Helper()
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.db@1":`+js+`}}`),
		map[string]worker.Adapter{worker.AdapterDBQuery: a, worker.AdapterDBExecFenced: a})
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	def, _, _ := m.Lookup("acme.db@1")
	return "acme.db@1", def
}

func TestAdapter_query(t *testing.T) {
	byCustomer := `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT id, total, note FROM orders WHERE customer = {customer} ORDER BY id","params":{"customer":{"type":"string","required":true}}}`
	tests := []struct {
		name string
		js   string
		args contract.Args
		want []contract.Args
	}{
		{"rows, null left out", byCustomer, contract.Args{"customer": str("ada")},
			[]contract.Args{{"id": num(t, 1), "total": num(t, 1200), "note": str("first")}, {"id": num(t, 2), "total": num(t, 800)}}},
		{"injection stays data", byCustomer, contract.Args{"customer": str("ada' OR '1'='1")}, []contract.Args{}},
		{"injection with statements stays data", byCustomer, contract.Args{"customer": str("x'; DROP TABLE orders; --")}, []contract.Args{}},
		{"placeholder inside a string is text", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT '{customer}' AS lit, count(*) AS n FROM orders WHERE customer = {customer}","params":{"customer":{"type":"string"}}}`,
			contract.Args{"customer": str("bob")}, []contract.Args{{"lit": str("{customer}"), "n": num(t, 1)}}},
		{"repeated placeholder", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT count(*) AS n FROM orders WHERE total > {min} AND id > {min} - 1000","params":{"min":{"type":"integer"}}}`,
			contract.Args{"min": num(t, 700)}, []contract.Args{{"n": num(t, 2)}}},
	}
	for engine, src := range sources(t) {
		a := &dbquery.Adapter{}
		t.Cleanup(func() { a.Close() })
		for _, tt := range tests {
			t.Run(engine+"/"+tt.name, func(t *testing.T) {
				id, def := tool(t, a, tt.js)
				out, err := a.Execute(context.Background(), worker.Call{Tool: id, Def: def, Source: src, Args: tt.args})
				if err != nil || out.Status != worker.StatusOK {
					t.Fatalf("Execute = %+v, %v", out, err)
				}
				if diff := cmp.Diff(tt.want, out.Rows, valueEqual); diff != "" {
					t.Errorf("rows (-want +got):\n%s", diff)
				}
			})
		}
		t.Run(engine+"/table survives", func(t *testing.T) {
			id, def := tool(t, a, `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT count(*) AS n FROM orders"}`)
			out, err := a.Execute(context.Background(), worker.Call{Tool: id, Def: def, Source: src, Args: contract.Args{}})
			if err != nil || len(out.Rows) != 1 || out.Rows[0]["n"] != num(t, 3) {
				t.Fatalf("Execute = %+v, %v; want 3 orders", out, err)
			}
		})
	}
}

func TestAdapter_exec(t *testing.T) {
	for engine, src := range sources(t) {
		a := &dbquery.Adapter{}
		t.Cleanup(func() { a.Close() })
		tests := []struct {
			name string
			js   string
			args contract.Args
			want int64
		}{
			{"update one", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"UPDATE orders SET note = {note} WHERE id = {id}","params":{"id":{"type":"integer","required":true},"note":{"type":"string","required":true}}}`,
				contract.Args{"id": num(t, 2), "note": str("'); DELETE FROM orders; --")}, 1},
			{"declared delete all", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"DELETE FROM orders","fence":{"allow":["delete_all"]}}`,
				contract.Args{}, 3},
		}
		for _, tt := range tests {
			t.Run(engine+"/"+tt.name, func(t *testing.T) {
				id, def := tool(t, a, tt.js)
				out, err := a.Execute(context.Background(), worker.Call{Tool: id, Def: def, Source: src, Args: tt.args})
				if err != nil || out.Status != worker.StatusOK {
					t.Fatalf("Execute = %+v, %v", out, err)
				}
				if diff := cmp.Diff([]contract.Args{{"rowsAffected": num(t, tt.want)}}, out.Rows, valueEqual); diff != "" {
					t.Errorf("rows (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestCheckTool shows the statements refused when the manifest is loaded.
func TestCheckTool(t *testing.T) {
	tests := []struct {
		name string
		js   string
		code contract.Code
	}{
		{"two statements", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT 1; SELECT 2"}`, contract.CodeSQLStatement},
		{"trailing semicolon is one statement", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT 1; -- done"}`, ""},
		{"semicolon in a string is one statement", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT 'a;b' AS s"}`, ""},
		{"query that writes", `{"adapter":"db-query","sourceTypes":["db"],"entry":"DELETE FROM orders WHERE id = 1"}`, contract.CodeSQLStatement},
		{"query with a writing CTE", `{"adapter":"db-query","sourceTypes":["db"],"entry":"WITH d AS (DELETE FROM orders RETURNING id) SELECT * FROM d"}`, contract.CodeSQLStatement},
		{"select into", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT * INTO copy FROM orders"}`, contract.CodeSQLStatement},
		{"undeclared placeholder", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT * FROM orders WHERE id = {id}"}`, contract.CodeManifestInvalid},
		{"bad placeholder", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT * FROM orders WHERE id = {Id}","params":{"id":{"type":"integer"}}}`, contract.CodeSQLStatement},
		{"unterminated string", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT 'x"}`, contract.CodeSQLStatement},
		{"drop", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"DROP TABLE orders"}`, contract.CodeSQLDestructive},
		{"drop allowed", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"DROP TABLE orders","fence":{"allow":["drop"]}}`, ""},
		{"truncate", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"TRUNCATE orders"}`, contract.CodeSQLDestructive},
		{"alter", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"ALTER TABLE orders ADD COLUMN x INT"}`, contract.CodeSQLDestructive},
		{"delete without where", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"DELETE FROM orders"}`, contract.CodeSQLDestructive},
		{"delete with where in a comment", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"DELETE FROM orders -- WHERE id = 1"}`, contract.CodeSQLDestructive},
		{"update without where", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"UPDATE orders SET note = 'x'"}`, contract.CodeSQLDestructive},
		{"delete with where", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"DELETE FROM orders WHERE id = {id}","params":{"id":{"type":"integer"}}}`, ""},
		{"exec of a select", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"SELECT 1"}`, contract.CodeSQLStatement},
		{"unknown allow", `{"adapter":"db-exec-fenced","sourceTypes":["db"],"entry":"DELETE FROM orders WHERE id = 1","fence":{"allow":["everything"]}}`, contract.CodeManifestInvalid},
		{"dollar quote SQLite would split", `{"adapter":"db-query","sourceTypes":["db"],"entry":"SELECT $x$; DROP TABLE orders$x$ AS s"}`, contract.CodeSQLStatement},
	}
	a := &dbquery.Adapter{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.db@1":`+tt.js+`}}`),
				map[string]worker.Adapter{worker.AdapterDBQuery: a, worker.AdapterDBExecFenced: a})
			if got := contract.CodeOf(err); got != tt.code {
				t.Errorf("ParseManifest = %v, want %q", err, tt.code)
			}
		})
	}
}
