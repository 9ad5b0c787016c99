package http_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	httpadapter "github.com/docketrun/docket/internal/worker/adapters/http"
)

// listen serves h on a real listener of its own port on 127.0.0.1.
func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{}) // closed when Serve returns
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		<-done
	})
	return "http://" + ln.Addr().String()
}

// A redirect to the Source's host on another port is another origin: it is refused, and
// the thief on that port never sees the Source's headers.
func TestAdapter_RedirectToAnotherPortIsRefused(t *testing.T) {
	var mu sync.Mutex
	var stolen []http.Header
	thief := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Header.Clone())
		mu.Unlock()
		io.WriteString(w, `{"stolen":true}`)
	}))
	source := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/same":
			http.Redirect(w, r, "/v1/final", http.StatusFound)
		case "/v1/final":
			io.WriteString(w, `{"auth":"`+r.Header.Get("X-Api-Key")+`"}`)
		default:
			http.Redirect(w, r, thief+"/steal", http.StatusFound)
		}
	}))
	src := &worker.Source{Name: "api", Type: "http", URL: worker.Secret(source + "/v1"),
		Headers: map[string]worker.Secret{"Authorization": "Bearer hunter2", "X-Api-Key": "k-hunter2"}}
	a := &httpadapter.Adapter{}
	run := func(entry string, fence *worker.Fence) worker.Outcome {
		def := worker.Tool{Adapter: worker.AdapterHTTP, SourceTypes: []string{"http"}, Entry: entry, Kind: contract.ToolKindRead, Fence: fence}
		out, _ := a.Execute(context.Background(), worker.Call{Tool: "acme.api@1", Def: def, Source: src, Args: contract.Args{}})
		return out
	}
	if out := run("GET /away", nil); out.Status != worker.StatusRefused || out.Code != contract.CodeHTTPHost {
		t.Errorf("redirect to another port = %+v, want refused http_host", out)
	}
	// Even a host listed in fence.hosts never gets the Source's secrets.
	if out := run("GET /away", &worker.Fence{Hosts: []string{"127.0.0.1"}}); out.Status != worker.StatusOK {
		t.Errorf("redirect to a listed host = %+v, want ok", out)
	}
	mu.Lock()
	if len(stolen) != 1 {
		t.Errorf("the other port got %d requests, want 1 (only the listed-host case)", len(stolen))
	}
	for _, h := range stolen {
		if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
			t.Errorf("the other port got the Source's headers: %v", h)
		}
	}
	mu.Unlock()
	// On the origin, a redirect keeps its headers.
	out := run("GET /same", nil)
	if out.Status != worker.StatusOK || len(out.Rows) != 1 || out.Rows[0]["auth"].Str() != "k-hunter2" {
		t.Errorf("redirect on the origin = %+v, want ok with the header", out)
	}
}

// A transport error is logged with the Source's origin only: its URL path held a secret.
func TestAdapter_TransportErrorRedactsURLPath(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the request fails in the transport
	src := &worker.Source{Name: "api", Type: "http", URL: worker.Secret("http://" + addr + "/hook/s3cr3t-path-token")}
	def := worker.Tool{Adapter: worker.AdapterHTTP, SourceTypes: []string{"http"}, Entry: "GET /items", Kind: contract.ToolKindRead}
	out, err := (&httpadapter.Adapter{}).Execute(context.Background(), worker.Call{Tool: "acme.api@1", Def: def, Source: src, Args: contract.Args{}})
	if out.Status != worker.StatusRefused || err == nil {
		t.Fatalf("Execute = %+v, %v; want a refusal with a cause", out, err)
	}
	var log bytes.Buffer
	slog.New(slog.NewTextHandler(&log, nil)).Warn("tool call failed", "err", err)
	if strings.Contains(log.String(), "s3cr3t") || strings.Contains(out.Reason, "s3cr3t") {
		t.Errorf("the log holds the URL path: %s", log.String())
	}
	if !strings.Contains(log.String(), addr) {
		t.Errorf("the log lost the origin: %s", log.String())
	}
}

// A redirect carries no Referer, nor any header derived from the Source's URL: the vault
// URL, with the token in its path, never reaches the redirect target, on a listed host
// or on the Source's own origin.
func TestAdapter_RedirectSendsNoReferer(t *testing.T) {
	const token = "s3cr3t-path-token"
	var mu sync.Mutex
	seen := map[string]http.Header{} // the headers each target got, by its name
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen["listed host"] = r.Header.Clone()
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	defer target.Close()
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hook/" + token + "/away":
			http.Redirect(w, r, target.URL+"/landing", http.StatusFound)
		case "/hook/" + token + "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			mu.Lock()
			seen["the Source's origin"] = r.Header.Clone()
			mu.Unlock()
			io.WriteString(w, `{"ok":true}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer vault.Close()
	src := &worker.Source{Name: "api", Type: "http", URL: worker.Secret(vault.URL + "/hook/" + token), Hosts: []string{"127.0.0.1"}}
	for _, entry := range []string{"GET /away", "GET /same"} {
		def := worker.Tool{Adapter: worker.AdapterHTTP, SourceTypes: []string{"http"}, Entry: entry, Kind: contract.ToolKindRead}
		out, err := (&httpadapter.Adapter{}).Execute(t.Context(), worker.Call{Tool: "acme.api@1", Def: def, Source: src, Args: contract.Args{}})
		if out.Status != worker.StatusOK {
			t.Fatalf("%s = %+v (%v), want ok after the redirect", entry, out, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	vaultHost := strings.TrimPrefix(vault.URL, "http://")
	for _, name := range []string{"listed host", "the Source's origin"} {
		h, ok := seen[name]
		if !ok {
			t.Errorf("the redirect to %s never arrived", name)
			continue
		}
		if v := h.Get("Referer"); v != "" {
			t.Errorf("the redirect to %s carried Referer %q", name, v)
		}
		for k, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, token) || (name == "listed host" && strings.Contains(v, vaultHost)) {
					t.Errorf("the redirect to %s carried %s: %q, derived from the Source's URL", name, k, v)
				}
			}
		}
	}
}
