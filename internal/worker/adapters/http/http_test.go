package http_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	httpadapter "github.com/docketrun/docket/internal/worker/adapters/http"
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

// service is a small JSON API; it records the last request it saw.
func service(t *testing.T) (*httptest.Server, *http.Request, *string) {
	t.Helper()
	var last http.Request
	var lastBody string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"elsewhere":true}`)
	}))
	t.Cleanup(other.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer hunter2-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"id": r.PathValue("id"), "raw": r.URL.EscapedPath(), "q": r.URL.Query().Get("q")})
	})
	mux.HandleFunc("POST /api/items", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		lastBody = string(b)
		last = *r
		io.WriteString(w, `[{"created":1},{"created":2}]`)
	})
	mux.HandleFunc("POST /api/broken", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", 500) })
	mux.HandleFunc("POST /api/reject", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad", http.StatusUnprocessableEntity) })
	// The hanging handlers also end when the test does: srv.Close waits for every handler,
	// and on a loaded machine the server may not see the client leave before then.
	testDone := make(chan struct{}) // closed by the cleanup registered below, before srv.Close
	hang := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-testDone:
		}
	}
	mux.HandleFunc("POST /api/hang", func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does the server notice the client leaving.
		io.ReadAll(r.Body)
		hang(r)
	})
	mux.HandleFunc("GET /api/hang", func(w http.ResponseWriter, r *http.Request) { hang(r) })
	mux.HandleFunc("GET /api/big", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"x":"`+strings.Repeat("y", 5000)+`"}`)
	})
	mux.HandleFunc("GET /api/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/x", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(testDone) }) // runs first: cleanups run last-registered first
	return srv, &last, &lastBody
}

func TestAdapter_Execute(t *testing.T) {
	srv, last, lastBody := service(t)
	src := &worker.Source{Name: "api", Type: "http", URL: worker.Secret(srv.URL + "/api"),
		Headers: map[string]worker.Secret{"Authorization": "Bearer hunter2-token"}}
	a := &httpadapter.Adapter{}
	tests := []struct {
		name   string
		entry  string
		kind   string
		params map[string]worker.Param
		fence  *worker.Fence
		args   contract.Args
		status worker.Status
		code   contract.Code
		want   []contract.Args
	}{
		{name: "get with escaped path", entry: "GET /items/{id}", args: contract.Args{"id": str("a b/../admin"), "q": str("x&y=1")},
			status: worker.StatusOK, want: []contract.Args{{"id": str("a b/../admin"), "raw": str("/api/items/a%20b%2F..%2Fadmin"), "q": str("x&y=1")}}},
		{name: "dot-dot segment refused", entry: "GET /items/{id}", args: contract.Args{"id": str("..")}, status: worker.StatusRefused, code: contract.CodeToolArgs},
		{name: "post json body", entry: "POST /items", kind: contract.ToolKindWrite, args: contract.Args{"name": str("n"), "qty": num(t, 2)},
			status: worker.StatusOK, want: []contract.Args{{"created": num(t, 1)}, {"created": num(t, 2)}}},
		{name: "5xx on a write is unknown", entry: "POST /broken", kind: contract.ToolKindWrite, args: contract.Args{}, status: worker.StatusUnknown, code: contract.CodeHTTPStatus},
		{name: "4xx on a write is refused", entry: "POST /reject", kind: contract.ToolKindWrite, args: contract.Args{}, status: worker.StatusRefused, code: contract.CodeHTTPStatus},
		{name: "timeout of a sent write is unknown", entry: "POST /hang", kind: contract.ToolKindWrite, args: contract.Args{}, fence: &worker.Fence{TimeoutMs: 100},
			status: worker.StatusUnknown, code: contract.CodeToolTimeout},
		{name: "timeout of a read is refused", entry: "GET /hang", args: contract.Args{}, fence: &worker.Fence{TimeoutMs: 100}, status: worker.StatusRefused, code: contract.CodeToolTimeout},
		{name: "response cap", entry: "GET /big", args: contract.Args{}, fence: &worker.Fence{MaxBytes: 1000}, status: worker.StatusRefused, code: contract.CodeOutputTooBig},
		{name: "redirect to another host", entry: "GET /away", args: contract.Args{}, status: worker.StatusRefused, code: contract.CodeHTTPHost},
		{name: "redirect to an allowed host", entry: "GET /away", args: contract.Args{}, fence: &worker.Fence{Hosts: []string{"localhost"}},
			status: worker.StatusOK, want: []contract.Args{{"elsewhere": contract.BoolValue(true)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := tt.kind
			if kind == "" {
				kind = contract.ToolKindRead
			}
			params := map[string]worker.Param{}
			for k, v := range tt.args {
				typ := worker.ParamString
				if v.Kind() == contract.ValueInt {
					typ = worker.ParamInteger
				}
				params[k] = worker.Param{Type: typ}
			}
			def := worker.Tool{Adapter: worker.AdapterHTTP, SourceTypes: []string{"http"}, Entry: tt.entry, Kind: kind, Params: params, Fence: tt.fence}
			if err := a.CheckTool("acme.api@1", def); err != nil {
				t.Fatalf("CheckTool: %v", err)
			}
			out, err := a.Execute(context.Background(), worker.Call{Tool: "acme.api@1", Def: def, Source: src, Args: tt.args})
			if out.Status != tt.status || out.Code != tt.code {
				t.Fatalf("Execute = %+v (%v), want %s %q", out, err, tt.status, tt.code)
			}
			if strings.Contains(out.Reason, "hunter2") {
				t.Errorf("reason leaks a secret: %q", out.Reason)
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, out.Rows, valueEqual); diff != "" {
					t.Errorf("rows (-want +got):\n%s", diff)
				}
			}
		})
	}
	if last.Header.Get("Content-Type") != "application/json" || *lastBody != `{"name":"n","qty":2}` {
		t.Errorf("POST body = %q (%s), want the arguments as JSON", *lastBody, last.Header.Get("Content-Type"))
	}
}

func TestAdapter_CheckTool(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		ok    bool
	}{
		{"ok", "GET /items/{id}?q={q}", true},
		{"no method", "/items", false},
		{"unknown method", "TRACE /items", false},
		{"absolute url", "GET http://evil.example/items", false},
		{"scheme-relative", "GET //evil.example/items", false},
		{"climbs", "GET /a/../admin", false},
		{"undeclared placeholder", "GET /items/{other}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := worker.Tool{Entry: tt.entry, Params: map[string]worker.Param{"id": {Type: "string"}, "q": {Type: "string"}}}
			err := (&httpadapter.Adapter{}).CheckTool("acme.api@1", def)
			if (err == nil) != tt.ok {
				t.Errorf("CheckTool(%q) = %v, want ok %v", tt.entry, err, tt.ok)
			}
		})
	}
}
