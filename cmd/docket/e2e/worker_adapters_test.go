package e2e

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// adaptersCapability has one Action per adapter docket worker wires, each against a
// Source of its own type.
//
//go:embed testdata/capability/adapters.toml
var adaptersCapability string

const adaptersManifest = `{"format": "docket-worker-tools/1", "tools": {
  "test.echo@1": {"adapter": "run", "sourceTypes": ["file"], "entry": "echo.sh", "kind": "run", "params": {"n": {"type": "string"}}},
  "test.record@1": {"adapter": "db-exec-fenced", "sourceTypes": ["db"], "entry": "INSERT INTO items (name, qty) VALUES ({name}, {qty})", "params": {"name": {"type": "string"}, "qty": {"type": "integer"}}},
  "test.lookup@1": {"adapter": "db-query", "sourceTypes": ["db"], "entry": "SELECT name, qty FROM items WHERE name = {name}", "params": {"name": {"type": "string"}}},
  "test.fetch@1": {"adapter": "http", "sourceTypes": ["http"], "entry": "GET /prices/{id}", "params": {"id": {"type": "string"}}},
  "test.add@1": {"adapter": "mcp", "sourceTypes": ["mcp"], "entry": "add", "kind": "read", "params": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
}}`

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// TestServeWorker_Adapters runs one Action through each adapter docket worker wires —
// run, db-exec-fenced and db-query on a SQLite file, http against a test server, mcp
// against a go-sdk server over Streamable HTTP — across real serve and worker processes.
// Each result lands on the Board as an attested fact, and on SIGTERM the worker ends its
// MCP session.
func TestServeWorker_Adapters(t *testing.T) {
	// The db Source is a SQLite file, and a fresh PostgreSQL database when
	// DOCKET_TEST_POSTGRES names a server.
	ledgers := []struct {
		name string
		open func(t *testing.T) (driver, dsn, vaultDSN string)
	}{
		{"sqlite", func(t *testing.T) (string, string, string) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			return "sqlite", path, "sqlite:" + path
		}},
		{"postgres", func(t *testing.T) (string, string, string) {
			dsn := pgTestDB(t)
			return "pgx", dsn, dsn
		}},
	}
	for _, l := range ledgers {
		t.Run(l.name, func(t *testing.T) {
			driver, dsn, vaultDSN := l.open(t)
			db, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE items (name TEXT NOT NULL, qty INTEGER NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			testAdapters(t, vaultDSN)
		})
	}
}

func testAdapters(t *testing.T, ledgerDSN string) {
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), adaptersCapability, 0o644)
	s := newServeEnv(t, "", capDir, "files", []string{"echoed"}, adaptersManifest)
	writeFile(t, filepath.Join(filepath.Dir(s.man), "echo.sh"), "#!/bin/sh\ncat\n", 0o755)

	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/prices/p-7" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id": "p-7", "cents": 1299}`)
	}))
	t.Cleanup(api.Close)
	calc := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1"}, nil)
	sdk.AddTool(calc, &sdk.Tool{Name: "add", Description: "adds", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	var sessionClosed atomic.Bool // set when the worker ends its MCP session (HTTP DELETE)
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return calc }, nil)
	mcpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			sessionClosed.Store(true)
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(mcpSrv.Close)

	for _, b := range []struct{ name, typ, words string }{{"ledger", "db", "item"}, {"api", "http", "price"}, {"calc", "mcp", "sum"}} {
		s.docket(t, nil, "source", "bind", "--connection", "laptop", "--name", b.name, "--type", b.typ, "--words", b.words)
	}
	vault, _ := json.Marshal(map[string]any{"sources": map[string]any{
		"files":  map[string]string{"type": "file", "root": s.files},
		"ledger": map[string]string{"type": "db", "dsn": ledgerDSN},
		"api":    map[string]string{"type": "http", "url": api.URL},
		"calc":   map[string]string{"type": "mcp", "url": mcpSrv.URL},
	}})
	writeFile(t, s.vault, string(vault), 0o600)
	s.lock(t, "test.echo@1", "test.record@1", "test.lookup@1", "test.fetch@1", "test.add@1")
	w := s.startWorker(t)
	w.waitLine(t, "lease acquired")

	gw := s.gateway(t)
	tests := []struct {
		action, params string
		pattern        string // a QueryBoard pattern the result must match, attested
	}{
		{"echo", `{"n": "1"}`, `{"predicate": "echoed", "args": {"n": "1"}}`},
		{"record", `{"name": "bolt", "qty": 40}`, ""},
		{"lookup", `{"name": "bolt"}`, `{"predicate": "item", "args": {"name": "bolt", "qty": 40}}`},
		{"fetch", `{"id": "p-7"}`, `{"predicate": "price", "args": {"id": "p-7", "cents": 1299}}`},
		{"add", `{"a": 2, "b": 3}`, `{"predicate": "sum", "args": {"total": 5}}`},
	}
	for _, tt := range tests {
		res := call(t, gw, "ApplyAction", `{"action": "`+tt.action+`", "params": `+tt.params+`}`)
		if !res.Accepted || len(res.Operations) == 0 || res.Operations[0].State != contract.OpDone {
			t.Fatalf("ApplyAction %s = %+v, want done", tt.action, res)
		}
		if tt.pattern == "" {
			continue
		}
		res = call(t, gw, "QueryBoard", `{"pattern": `+tt.pattern+`}`)
		var q struct {
			Matches struct{ Items []contract.Node } `json:"matches"`
		}
		if err := json.Unmarshal(res.Result, &q); err != nil {
			t.Fatalf("QueryBoard %s: %v\n%s", tt.pattern, err, res.Result)
		}
		if len(q.Matches.Items) != 1 || q.Matches.Items[0].Tier != contract.TierAttested {
			t.Errorf("after %s, QueryBoard %s = %+v, want one attested fact", tt.action, tt.pattern, q.Matches.Items)
		}
	}

	// On SIGTERM the worker releases its lease and closes what its adapters hold open.
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-w.done
	if err := w.cmd.Wait(); err != nil {
		t.Errorf("docket worker after SIGTERM: %v", err)
	}
	if !sessionClosed.Load() {
		t.Errorf("docket worker exited without ending its MCP session:\n%s", w.log())
	}
}
