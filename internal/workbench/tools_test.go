package workbench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// fakeServe stands in for docket serve behind the tools page: it keeps the Sources bound
// and every request body that reached it.
type fakeServe struct {
	mu      sync.Mutex
	bodies  []string
	sources map[string]contract.Source
}

func (f *fakeServe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, r.Method+" "+r.URL.String()+"\n"+string(b))
	const sources = "/api/v1/projects/default/connections/local/sources"
	switch {
	case r.Method == http.MethodGet && r.URL.Path == sources:
		page := contract.Page[contract.Source]{Items: []contract.Source{}}
		for _, s := range f.sources {
			page.Items = append(page.Items, s)
		}
		json.NewEncoder(w).Encode(page)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, sources+"/"):
		var s contract.Source
		if err := json.Unmarshal(b, &s); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.Name = strings.TrimPrefix(r.URL.Path, sources+"/")
		f.sources[s.Name] = s
		json.NewEncoder(w).Encode(s)
	default:
		http.Error(w, `{"errorCode":"not_found","teaching":"no such route in the fake"}`, http.StatusNotFound)
	}
}

// newToolsRig is the tools page of a docket start whose data dir is a temporary one and
// whose serve is a fakeServe; its discovery lists found.
func newToolsRig(t *testing.T, found []toolset.Discovered) (*toolsPage, *fakeServe, string) {
	t.Helper()
	dir := t.TempDir()
	if err := datadir.WritePrivate(filepath.Join(dir, datadir.TokenFile), []byte("dkt_member_token\n")); err != nil {
		t.Fatal(err)
	}
	fs := &fakeServe{sources: map[string]contract.Source{}}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	rts := newRuntimes(Config{Dir: dir})
	rts.base = srv.URL
	manifest, vault, err := workerFiles(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p := &toolsPage{rts: rts, runKey: "RUNKEY", xorigin: http.NewCrossOriginProtection(),
		files: toolset.Files{Manifest: manifest, Vault: vault},
		discover: func(ctx context.Context, base, source string) ([]toolset.Discovered, bool, error) {
			return found, false, nil
		}}
	return p, fs, dir
}

// post sends form to the tools page at path as the page would, and returns the answer.
func post(t *testing.T, p *toolsPage, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	form.Set("csrf", p.csrf())
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7420"+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// TestToolsPage_SecretsStayInTheVault: the secrets typed into docket start's tools page —
// an MCP server's environment and a Streamable HTTP server's header, an HTTP API's key,
// a DSN — are written into the vault (mode 0600) and nowhere else: not the manifest, not
// a request body that reached serve, not the page that answers (a refused form is shown
// again without them). serve gets each Source's name, type, words and tier.
func TestToolsPage_SecretsStayInTheVault(t *testing.T) {
	const (
		envSecret    = "fs-token-SECRET-1a2b3c"
		headerSecret = "Bearer mcp-SECRET-4d5e6f"
		apiSecret    = "Bearer api-SECRET-7a8b9c"
		dsnSecret    = "postgres://reader:dsn-SECRET-0d1e@127.0.0.1/shop"
	)
	secrets := []string{envSecret, headerSecret, apiSecret, dsnSecret}
	found := []toolset.Discovered{
		{Name: "read_text_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}}}`), ReadOnly: true},
		{Name: "write_file", Description: "Write a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
	}
	p, fs, dir := newToolsRig(t, found)
	var answers []string
	check := func(w *httptest.ResponseRecorder, status int, what string) {
		t.Helper()
		answers = append(answers, w.Body.String())
		if w.Code != status {
			t.Fatalf("%s: status %d, want %d:\n%s", what, w.Code, status, w.Body)
		}
	}

	// A refused form is shown again without its secrets.
	w := post(t, p, ToolsPath+"/mcp", url.Values{"name": {"files"}, "transport": {"stdio"}, "command": {""}, "env": {"FS_TOKEN=" + envSecret}})
	check(w, http.StatusBadRequest, "an MCP server without a command")
	check(post(t, p, ToolsPath+"/mcp", url.Values{"name": {"files"}, "transport": {"stdio"}, "command": {"/usr/bin/mcp-fs"}, "args": {"/srv/docs\n--read-only"},
		"env": {"FS_TOKEN=" + envSecret}}), http.StatusOK, "a stdio MCP server")
	w = post(t, p, ToolsPath+"/mcp/pick", url.Values{"source": {"files"}, "pick": {"read_text_file", "write_file"}, "kind.read_text_file": {"read"}})
	check(w, http.StatusSeeOther, "the picked tools")
	if loc := w.Header().Get("Location"); loc != "/projects/default/tools?notice=tools_added" {
		t.Errorf("after the pick the browser goes to %q, want the console's Tools page", loc)
	}
	check(post(t, p, ToolsPath+"/mcp", url.Values{"name": {"remote"}, "transport": {"http"}, "url": {"https://mcp.example.com/mcp"},
		"headers": {"Authorization: " + headerSecret}}), http.StatusOK, "a Streamable HTTP MCP server")
	w = post(t, p, ToolsPath+"/template/http", url.Values{"source": {"shop"}, "base_url": {"https://api.example.com/v1"}, "auth_header": {"Authorization"},
		"auth_value": {apiSecret}, "routes": {"acme.order@1 GET /orders/{id} id\nacme.refund@1 POST /refunds order:string amount:integer"}})
	check(w, http.StatusSeeOther, "an HTTP API")
	if loc := w.Header().Get("Location"); loc != "/projects/default/tools?notice=tools_added" {
		t.Errorf("after the HTTP API the browser goes to %q, want the Tools page", loc)
	}
	check(post(t, p, ToolsPath+"/template/sql", url.Values{"source": {"orders"}, "dsn": {dsnSecret}, "id": {"acme.totals@1"},
		"query": {"SELECT id, total FROM orders WHERE customer = {customer}"}}), http.StatusSeeOther, "a SQL query")

	vault, err := os.ReadFile(filepath.Join(dir, "vault.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if !strings.Contains(string(vault), s) {
			t.Errorf("the vault does not hold a secret typed in: %s", vault)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "vault.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the vault's mode is %v (%v), want 0600", fi.Mode(), err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"files.read_text_file@1", "files.write_file@1", "acme.order@1", "acme.refund@1", "acme.totals@1"} {
		if !strings.Contains(string(manifest), `"`+id+`"`) {
			t.Errorf("the manifest has no %s:\n%s", id, manifest)
		}
	}
	var m struct {
		Tools map[string]struct{ Kind string } `json:"tools"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	if k := m.Tools["files.read_text_file@1"].Kind; k != "read" {
		t.Errorf("read_text_file was added as %q, want the read chosen for it", k)
	}
	if k := m.Tools["files.write_file@1"].Kind; k != "write" {
		t.Errorf("write_file was added as %q, want write, the default", k)
	}
	fs.mu.Lock()
	bodies := strings.Join(fs.bodies, "\n")
	bound := fs.sources
	fs.mu.Unlock()
	for _, s := range secrets {
		for where, text := range map[string]string{"the manifest": string(manifest), "a request body that reached serve": bodies, "a page it answered": strings.Join(answers, "\n")} {
			if strings.Contains(text, s) || strings.Contains(text, url.QueryEscape(s)) {
				t.Errorf("a secret typed in is in %s", where)
			}
		}
	}
	for _, name := range []string{"files", "remote"} {
		if s, ok := bound[name]; !ok || s.Tier != contract.TierAttested || !slices.Contains(s.Words, "mcp_tool") {
			t.Errorf("the Source %s is bound as %+v, want it bound attested, attesting mcp_tool", name, s)
		}
	}
	// These Tools map no rows to facts: their Sources are bound attesting nothing, so that
	// their calls can run.
	for _, name := range []string{"shop", "orders"} {
		if s, ok := bound[name]; !ok || len(s.Words) != 0 {
			t.Errorf("the Source %s is bound as %+v (%v), want it bound with no words", name, s, ok)
		}
	}
}

// TestToolsPage_Decode: the tools forms are read strictly, as the first-use form is.
func TestToolsPage_Decode(t *testing.T) {
	p, _, _ := newToolsRig(t, nil)
	ok := "csrf=" + p.csrf() + "&name=files&transport=stdio&command=x&args=&env=&url=&headers="
	tests := []struct {
		name, body, contentType string
		want                    contract.Code
	}{
		{"the page's form", ok, "application/x-www-form-urlencoded", ""},
		{"JSON", `{"name":"files"}`, "application/json", contract.CodeUnsupportedMedia},
		{"no CSRF token", strings.Replace(ok, "csrf="+p.csrf(), "csrf=", 1), "application/x-www-form-urlencoded", contract.CodeCSRF},
		{"unknown field", ok + "&admin=1", "application/x-www-form-urlencoded", contract.CodeInvalidArgument},
		{"repeated field", ok + "&command=y", "application/x-www-form-urlencoded", contract.CodeInvalidArgument},
		{"over the bound", ok + "&args=" + strings.Repeat("a", maxToolsForm), "application/x-www-form-urlencoded", contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7420"+ToolsPath+"/mcp", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.contentType)
			_, err := p.decode(httptest.NewRecorder(), r, mcpFields, nil)
			if got := contract.CodeOf(err); got != tt.want {
				t.Errorf("decode = %v, want code %q", err, tt.want)
			}
		})
	}
}

// FuzzToolsPage_Text: the tools page's text fields — routes, params and NAME=value
// lines — are read or refused with a code and a teaching, never a panic, and a refusal
// never quotes a value.
func FuzzToolsPage_Text(f *testing.F) {
	f.Add("acme.order@1 GET /orders/{id} id\nacme.refund@1 POST /refunds amount:integer order?")
	f.Add("FS_TOKEN=secret\nOTHER = x")
	f.Add("Authorization: Bearer x")
	f.Add("a b")
	f.Fuzz(func(t *testing.T, text string) {
		for _, err := range []error{
			func() error { _, err := parseRoutes(text); return err }(),
			func() error { _, err := pairs(text, "=", "env", "NAME=value"); return err }(),
			func() error { _, err := parseParams(strings.Fields(text), "params"); return err }(),
		} {
			if err == nil {
				continue
			}
			if contract.CodeOf(err) == "" {
				t.Fatalf("%q refused without a code: %v", text, err)
			}
		}
	})
}
