package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/mcp"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// factServer is a real MCP server over Streamable HTTP with n tools listed 100 a page,
// one of which answers a table as structuredContent {"rows": […]}. It records the
// capabilities each client advertised.
func factServer(t *testing.T, n int) (*worker.Source, func() []json.RawMessage) {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "facts", Version: "1"}, &sdk.ServerOptions{PageSize: 100})
	sdk.AddTool(s, &sdk.Tool{Name: "table", Description: "rows of facts"},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"rows": []map[string]any{{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}}}, nil
		})
	for i := 1; i < n; i++ {
		sdk.AddTool(s, &sdk.Tool{Name: fmt.Sprintf("t%03d", i)}, func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return nil, nil, nil
		})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var mu sync.Mutex
	var caps []json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Capabilities json.RawMessage `json:"capabilities"`
			} `json:"params"`
		}
		if json.Unmarshal(b, &m) == nil && m.Method == "initialize" {
			mu.Lock()
			caps = append(caps, m.Params.Capabilities)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &worker.Source{Name: "facts", Type: "mcp", URL: worker.Secret(srv.URL)}, func() []json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return caps
	}
}

// The MCP adapter as a Source of facts: a {"rows": […]} table is its
// rows; discovery pages through the list and reports, rather than fails, a list cut at
// MaxTools; the client advertises no roots, sampling or elicitation.
func TestAdapter_SourceOfFacts(t *testing.T) {
	src, caps := factServer(t, 250)
	a := &mcp.Adapter{}
	defer a.Close()
	def := worker.Tool{Adapter: worker.AdapterMCP, SourceTypes: []string{"mcp"}, Entry: "table", Kind: contract.ToolKindRead}
	out, err := a.Execute(context.Background(), worker.Call{Tool: "acme.table@1", Def: def, Source: src, Args: contract.Args{}})
	if err != nil || out.Status != worker.StatusOK {
		t.Fatalf("Execute = %+v, %v", out, err)
	}
	want := []contract.Args{{"sku": contract.StringValue("a"), "qty": num(t, 1)}, {"sku": contract.StringValue("b"), "qty": num(t, 2)}}
	if diff := cmp.Diff(want, out.Rows, valueEqual); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	disc, _, _ := m.Lookup(worker.MCPDiscoverTool)
	out, err = a.Execute(context.Background(), worker.Call{Tool: worker.MCPDiscoverTool, Def: disc, Source: src, Args: contract.Args{}})
	if err != nil || out.Status != worker.StatusOK {
		t.Fatalf("discover = %+v, %v", out, err)
	}
	if len(out.Rows) != mcp.MaxTools || !out.Rows[0]["truncated"].Bool() {
		t.Errorf("discover of 250 tools = %d rows, truncated %v; want %d, true", len(out.Rows), out.Rows[0]["truncated"], mcp.MaxTools)
	}
	for _, c := range caps() {
		if string(c) != "{}" {
			t.Errorf("the client advertised capabilities %s, want {}", c)
		}
	}
	if len(caps()) == 0 {
		t.Error("no initialize was seen")
	}

	small, _ := factServer(t, 150)
	small.Name = "few" // sessions are kept by Source name
	out, err = a.Execute(context.Background(), worker.Call{Tool: worker.MCPDiscoverTool, Def: disc, Source: small, Args: contract.Args{}})
	if err != nil || len(out.Rows) != 150 || out.Rows[0]["truncated"].Bool() {
		t.Errorf("discover of 150 tools over two pages = %d rows (%v); want 150, not truncated", len(out.Rows), err)
	}
}

// An mcp Tool that declares no kind is a write: a server's tool may act.
func TestParseManifest_MCPKindDefaultsToWrite(t *testing.T) {
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.x@1":{"adapter":"mcp","sourceTypes":["mcp"],"entry":"x"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := m.Lookup("acme.x@1"); d.Kind != contract.ToolKindWrite {
		t.Errorf("kind = %q, want write", d.Kind)
	}
}

// An MCP server that redirects off its origin (another port of the same host) is not
// followed, and the Source's headers never reach the other port.
func TestAdapter_RedirectOffOriginKeepsHeaders(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			stolen.Add(1)
		}
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(thief.Close)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(src.Close)
	a := &mcp.Adapter{}
	defer a.Close()
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	disc, _, _ := m.Lookup(worker.MCPDiscoverTool)
	out, _ := a.Execute(context.Background(), worker.Call{Tool: worker.MCPDiscoverTool, Def: disc, Args: contract.Args{},
		Source: &worker.Source{Name: "away", Type: "mcp", URL: worker.Secret(src.URL + "/mcp"), Headers: map[string]worker.Secret{"Authorization": "Bearer hunter2"}}})
	if out.Status != worker.StatusRefused {
		t.Errorf("discover through an off-origin redirect = %+v, want refused", out)
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("the other port got the Source's Authorization %d times", n)
	}
}
