package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/mcp"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

func num(t testing.TB, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// sources returns an mcp Source over stdio (this test binary re-executed as the server)
// and one over Streamable HTTP (an httptest server that wants a bearer token).
func sources(t *testing.T) map[string]*worker.Source {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return newServer(release) }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer hunter2-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// Runs before srv.Close: a held call must end for the server to close.
	t.Cleanup(func() { close(release) })
	return map[string]*worker.Source{
		"stdio": {Name: "tools", Type: "mcp", Command: []string{exe, "-test.run=^$"},
			Env: map[string]worker.Secret{"MCP_ADAPTER_TEST_SERVER": "1", "MCP_EXTRA": "given"}},
		"http": {Name: "tools", Type: "mcp", URL: worker.Secret(srv.URL + "/mcp"),
			Headers: map[string]worker.Secret{"Authorization": "Bearer hunter2-token"}},
	}
}

func TestAdapter_Execute(t *testing.T) {
	for _, kv := range [][2]string{{"OPENAI_API_KEY", "leak-value-1"}, {"DOCKET_CONNECTION_KEY", "leak-value-2"}, {"SOME_PASSWORD", "leak-value-3"}} {
		t.Setenv(kv[0], kv[1])
	}
	tests := []struct {
		name   string
		entry  string
		kind   string
		args   contract.Args
		fence  *worker.Fence
		status worker.Status
		code   contract.Code
		want   []contract.Args
	}{
		{name: "structured content", entry: "add", args: contract.Args{"a": num(t, 2), "b": num(t, 40)},
			status: worker.StatusOK, want: []contract.Args{{"sum": num(t, 42)}}},
		{name: "text content", entry: "lines", args: contract.Args{}, status: worker.StatusOK,
			want: []contract.Args{{"n": num(t, 1)}, {"n": num(t, 2)}, {"text": contract.StringValue("plain words")}}},
		{name: "tool error on a read is refused", entry: "fail", args: contract.Args{}, status: worker.StatusRefused, code: contract.CodeMCPTool},
		{name: "tool error on a write is unknown", entry: "fail", kind: contract.ToolKindWrite, args: contract.Args{}, status: worker.StatusUnknown, code: contract.CodeMCPTool},
		{name: "result cap", entry: "big", args: contract.Args{}, status: worker.StatusRefused, code: contract.CodeOutputTooBig},
		{name: "timeout of a write is unknown", entry: "hang", kind: contract.ToolKindWrite, args: contract.Args{}, fence: &worker.Fence{TimeoutMs: 200},
			status: worker.StatusUnknown, code: contract.CodeToolTimeout},
		{name: "after a timeout the next call works", entry: "add", args: contract.Args{"a": num(t, 1), "b": num(t, 1)},
			status: worker.StatusOK, want: []contract.Args{{"sum": num(t, 2)}}},
	}
	adapters := map[string]*mcp.Adapter{"stdio": {}, "http": {}}
	for _, a := range adapters {
		t.Cleanup(func() { a.Close() }) // after the servers' cleanups, which release held calls
	}
	for transport, src := range sources(t) {
		a := adapters[transport]
		for _, tt := range tests {
			t.Run(transport+"/"+tt.name, func(t *testing.T) {
				kind := tt.kind
				if kind == "" {
					kind = contract.ToolKindRead
				}
				def := worker.Tool{Adapter: worker.AdapterMCP, SourceTypes: []string{"mcp"}, Entry: tt.entry, Kind: kind, Fence: tt.fence}
				out, err := a.Execute(context.Background(), worker.Call{Tool: "acme.tools@1", Def: def, Source: src, Args: tt.args})
				if out.Status != tt.status || out.Code != tt.code {
					t.Fatalf("Execute = %+v (%v), want %s %q", out, err, tt.status, tt.code)
				}
				if strings.Contains(out.Reason, "hunter2") || strings.Contains(out.Reason, "ledger") {
					t.Errorf("reason leaks: %q", out.Reason)
				}
				if tt.want != nil {
					if diff := cmp.Diff(tt.want, out.Rows, valueEqual); diff != "" {
						t.Errorf("rows (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
	t.Run("stdio/env is scrubbed", func(t *testing.T) {
		a := &mcp.Adapter{}
		t.Cleanup(func() { a.Close() })
		def := worker.Tool{Adapter: worker.AdapterMCP, SourceTypes: []string{"mcp"}, Entry: "env", Kind: contract.ToolKindRead}
		out, err := a.Execute(context.Background(), worker.Call{Tool: "acme.tools@1", Def: def, Source: sources(t)["stdio"], Args: contract.Args{}})
		if err != nil {
			t.Fatal(err)
		}
		want := []contract.Args{{"leaks": num(t, 0), "extra": contract.StringValue("given")}}
		if diff := cmp.Diff(want, out.Rows, valueEqual); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})
}

func TestAdapter_discover(t *testing.T) {
	for transport, src := range sources(t) {
		t.Run(transport, func(t *testing.T) {
			a := &mcp.Adapter{}
			t.Cleanup(func() { a.Close() })
			m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			def, _, _ := m.Lookup(worker.MCPDiscoverTool)
			out, err := a.Execute(context.Background(), worker.Call{Tool: worker.MCPDiscoverTool, Def: def, Source: src, Args: contract.Args{}})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range out.Rows {
				names = append(names, r["name"].Str())
				if r["name"].Str() == "add" && (!r["readOnly"].Bool() || !strings.Contains(r["inputSchema"].Str(), `"a"`) || !strings.Contains(r["outputSchema"].Str(), `"sum"`)) {
					t.Errorf("add = %v, want readOnly, its input schema and its output schema", r)
				}
				// A tool that declares no structured output says so with an empty outputSchema.
				if r["name"].Str() == "lines" && r["outputSchema"].Str() != "" {
					t.Errorf("lines = %v, want no outputSchema", r)
				}
			}
			if diff := cmp.Diff([]string{"add", "big", "env", "fail", "hang", "lines"}, names); diff != "" {
				t.Errorf("discovered tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdapter_unreachable(t *testing.T) {
	a := &mcp.Adapter{}
	src := &worker.Source{Name: "gone", Type: "mcp", URL: worker.Secret("http://user:hunter2@127.0.0.1:1/mcp")}
	def := worker.Tool{Adapter: worker.AdapterMCP, SourceTypes: []string{"mcp"}, Entry: "add", Kind: contract.ToolKindWrite}
	out, _ := a.Execute(context.Background(), worker.Call{Tool: "acme.tools@1", Def: def, Source: src, Args: contract.Args{}})
	if out.Status != worker.StatusRefused || out.Code != contract.CodeMCPUnavailable || strings.Contains(out.Reason, "hunter2") {
		t.Errorf("Execute = %+v, want refused mcp_unavailable without the URL", out)
	}
}
