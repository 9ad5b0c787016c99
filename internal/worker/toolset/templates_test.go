package toolset_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/dbquery"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// load reads back the manifest and vault f holds, as the worker loads them.
func load(t *testing.T, f toolset.Files) (*worker.Manifest, *worker.Vault) {
	t.Helper()
	mb, err := os.ReadFile(f.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := worker.ParseManifest(mb, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.LoadVault(f.Vault)
	if err != nil {
		t.Fatal(err)
	}
	return m, v
}

func TestAddFolder(t *testing.T) {
	f := files(t)
	root := t.TempDir()
	added, err := f.AddFolder(toolset.Folder{Source: "docs", Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(added.Tools) != 6 || added.Source.Type != "file" || strings.Contains(strings.Join(ids(added.Tools), " "), "write") {
		t.Errorf("read-only folder = %+v; want the six read Tools", added)
	}
	v, err := worker.LoadVault(f.Vault)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := v.Source("docs"); !ok || s.Root != root {
		t.Errorf("vault source = %+v", s)
	}
	added, err = f.AddFolder(toolset.Folder{Source: "out", Root: root, Write: true})
	if err != nil || len(added.Tools) != 8 {
		t.Errorf("read-write folder = %+v, %v; want eight Tools", added, err)
	}
	for _, tt := range []struct {
		in    toolset.Folder
		field string
	}{
		{toolset.Folder{Source: "a", Root: "rel/dir"}, "root"},
		{toolset.Folder{Source: "a", Root: filepath.Join(root, "missing")}, "root"},
		{toolset.Folder{Source: "", Root: root}, "name"},
	} {
		if _, err := f.AddFolder(tt.in); !fieldRefusal(err, tt.field) {
			t.Errorf("AddFolder(%+v) = %v, want template_field naming %s", tt.in, err, tt.field)
		}
	}
}

// fieldRefusal reports whether err is template_field naming field first.
func fieldRefusal(err error, field string) bool {
	return contract.CodeOf(err) == contract.CodeTemplateField && strings.HasPrefix(strings.TrimPrefix(err.Error(), "template_field: "), field+":")
}

func TestAddHTTPAPI(t *testing.T) {
	f := files(t)
	const key = "Bearer api-key-secret"
	id := worker.Param{Type: worker.ParamString, Required: true}
	added, err := f.AddHTTPAPI(toolset.HTTPAPI{Source: "shop", BaseURL: "https://api.example.com/v1", AuthHeader: "Authorization", AuthValue: key,
		Routes: []toolset.Route{
			{ID: "shop.order@1", Method: "get", Path: "/orders/{id}", Params: map[string]worker.Param{"id": id}, Returns: []string{"id", "total_cents"}},
			{ID: "shop.refund@1", Method: "POST", Path: "/orders/{id}/refund", Params: map[string]worker.Param{"id": id}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(added.Source.Words, " ") != "id total_cents" || len(added.Tools) != 2 {
		t.Errorf("AddHTTPAPI = %+v", added)
	}
	m, v := load(t, f)
	get, _, _ := m.Lookup("shop.order@1")
	post, _, _ := m.Lookup("shop.refund@1")
	if get.Kind != contract.ToolKindRead || post.Kind != contract.ToolKindWrite || get.Entry != "GET /orders/{id}" {
		t.Errorf("kinds by method: GET %+v, POST %+v", get, post)
	}
	if s, _ := v.Source("shop"); s.Headers["Authorization"].Reveal() != key {
		t.Error("the auth header is not in the vault")
	}
	if mb, _ := os.ReadFile(f.Manifest); strings.Contains(string(mb), "api-key-secret") {
		t.Error("the auth header is in the manifest")
	}
	// More routes on the Source already there: no base URL.
	if _, err := f.AddHTTPAPI(toolset.HTTPAPI{Source: "shop", Routes: []toolset.Route{{ID: "shop.orders@1", Method: "GET", Path: "/orders"}}}); err != nil {
		t.Errorf("a route on the existing Source = %v", err)
	}
	for _, tt := range []struct {
		name  string
		in    toolset.HTTPAPI
		field string
	}{
		{"no routes", toolset.HTTPAPI{Source: "a", BaseURL: "https://h"}, "routes"},
		{"bad url", toolset.HTTPAPI{Source: "a", BaseURL: "h/v1", Routes: []toolset.Route{{ID: "a.b@1", Method: "GET", Path: "/"}}}, "base_url"},
		{"value without header", toolset.HTTPAPI{Source: "a", BaseURL: "https://h", AuthValue: key, Routes: []toolset.Route{{ID: "a.b@1", Method: "GET", Path: "/"}}}, "auth_header"},
		{"bad method", toolset.HTTPAPI{Source: "a", BaseURL: "https://h", Routes: []toolset.Route{{ID: "a.b@1", Method: "TRACE", Path: "/"}}}, "routes[0].method"},
		{"bad path", toolset.HTTPAPI{Source: "a", BaseURL: "https://h", Routes: []toolset.Route{{ID: "a.b@1", Method: "GET", Path: "orders"}}}, "routes[0].path"},
		{"undeclared placeholder", toolset.HTTPAPI{Source: "a", BaseURL: "https://h", Routes: []toolset.Route{{ID: "a.b@1", Method: "GET", Path: "/o/{id}"}}}, "routes[0].params"},
		{"bad id", toolset.HTTPAPI{Source: "a", BaseURL: "https://h", Routes: []toolset.Route{{ID: "orders", Method: "GET", Path: "/"}}}, "routes[0].id"},
		{"reserved vendor", toolset.HTTPAPI{Source: "a", BaseURL: "https://h", Routes: []toolset.Route{{ID: "docket.x@1", Method: "GET", Path: "/"}}}, "routes[0].id"},
		{"unknown source", toolset.HTTPAPI{Source: "nope", Routes: []toolset.Route{{ID: "a.b@1", Method: "GET", Path: "/"}}}, "source"},
	} {
		if _, err := f.AddHTTPAPI(tt.in); !fieldRefusal(err, tt.field) || strings.Contains(err.Error(), "api-key-secret") {
			t.Errorf("%s: AddHTTPAPI = %v, want template_field naming %s, no secret", tt.name, err, tt.field)
		}
	}
}

// TestAddSQLQuery: the query's placeholders become required string params, the DSN goes
// into the vault, and the Tool runs through the db-query adapter.
func TestAddSQLQuery(t *testing.T) {
	f := files(t)
	dbPath := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE orders (id INTEGER, customer TEXT, total_cents INTEGER); INSERT INTO orders VALUES (1, 'ada', 1200), (2, 'bob', 50)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	added, err := f.AddSQLQuery(toolset.SQLQuery{Source: "shop", DSN: "sqlite:" + dbPath, ID: "shop.totals@1",
		Query: "SELECT id, total_cents FROM orders WHERE customer = {customer}", Returns: []string{"id", "total_cents"}})
	if err != nil {
		t.Fatal(err)
	}
	if added.Source.Type != "db" || strings.Join(added.Source.Words, " ") != "id total_cents" {
		t.Errorf("AddSQLQuery = %+v", added)
	}
	m, v := load(t, f)
	def, _, _ := m.Lookup("shop.totals@1")
	if p := def.Params["customer"]; p.Type != worker.ParamString || !p.Required {
		t.Errorf("params = %+v", def.Params)
	}
	src, _ := v.Source("shop")
	a := &dbquery.Adapter{}
	t.Cleanup(func() { a.Close() })
	out, err := a.Execute(context.Background(), worker.Call{Tool: "shop.totals@1", Def: def, Source: src, Args: contract.Args{"customer": contract.StringValue("ada")}})
	if err != nil || len(out.Rows) != 1 || out.Rows[0]["total_cents"].Int() != 1200 {
		t.Errorf("running the query = %+v, %v", out, err)
	}
	if _, err := f.AddSQLQuery(toolset.SQLQuery{Source: "shop", ID: "shop.wipe@1", Query: "DELETE FROM orders"}); contract.CodeOf(err) != contract.CodeSQLStatement {
		t.Errorf("a DELETE = %v, want sql_statement", err)
	}
	for _, tt := range []struct {
		in    toolset.SQLQuery
		field string
	}{
		{toolset.SQLQuery{Source: "b", DSN: "mysql://u:pw-secret@h/db", ID: "a.b@1", Query: "SELECT 1"}, "dsn"},
		{toolset.SQLQuery{Source: "shop", ID: "a.b@1", Query: "  "}, "query"},
		{toolset.SQLQuery{Source: "shop", ID: "ab", Query: "SELECT 1"}, "id"},
		{toolset.SQLQuery{Source: "nope", ID: "a.b@1", Query: "SELECT 1"}, "source"},
	} {
		if _, err := f.AddSQLQuery(tt.in); !fieldRefusal(err, tt.field) || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("AddSQLQuery(%+v) = %v, want template_field naming %s, no secret", tt.in, err, tt.field)
		}
	}
}

func TestAddScript(t *testing.T) {
	f := files(t)
	dir := filepath.Dir(f.Manifest)
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "report.sh"), []byte("#!/bin/sh\necho '{}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "plain.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	added, err := f.AddScript(toolset.Script{ID: "acme.report@1", Entry: "scripts/report.sh", Env: []string{"REPORT_TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	if added.Source != nil || len(added.Tools) != 1 {
		t.Errorf("AddScript = %+v; want a source-free Tool", added)
	}
	if _, err := os.Stat(f.Vault); err == nil {
		t.Error("a script wrote the vault")
	}
	m, err := worker.ParseManifest(must(os.ReadFile(f.Manifest)), nil)
	if err != nil {
		t.Fatal(err)
	}
	def, _, _ := m.Lookup("acme.report@1")
	if def.Kind != contract.ToolKindRun || def.Env == nil || def.Env.Pass[0] != "REPORT_TOKEN" {
		t.Errorf("script Tool = %+v", def)
	}
	for _, tt := range []struct {
		in    toolset.Script
		field string
	}{
		{toolset.Script{ID: "a.b@1", Entry: "/bin/sh"}, "entry"},
		{toolset.Script{ID: "a.b@1", Entry: "../x.sh"}, "entry"},
		{toolset.Script{ID: "a.b@1", Entry: "scripts/missing.sh"}, "entry"},
		{toolset.Script{ID: "a.b@1", Entry: "scripts/plain.txt"}, "entry"},
		{toolset.Script{ID: "a.b@1", Entry: "scripts/report.sh", Env: []string{"DOCKET_CONNECTION_KEY"}}, "env"},
		{toolset.Script{ID: "a.b@1", Entry: "scripts/report.sh", Env: []string{"A=B"}}, "env"},
	} {
		if _, err := f.AddScript(tt.in); !fieldRefusal(err, tt.field) {
			t.Errorf("AddScript(%+v) = %v, want template_field naming %s", tt.in, err, tt.field)
		}
	}
	if _, err := f.AddScript(toolset.Script{ID: "acme.report@1", Entry: "scripts/report.sh"}); contract.CodeOf(err) != contract.CodeToolExists {
		t.Errorf("the same id again = %v, want tool_exists", err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
