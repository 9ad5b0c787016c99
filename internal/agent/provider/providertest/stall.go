package providertest

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Silent starts a model server on a real listener that accepts each connection and never
// answers, holding it until the test ends, and returns its URL: what a first-byte
// deadline must end (docs/workbench.md, Model deadlines).
func Silent(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// Stalling starts a model server that answers a Chat Completions request with the headers
// of a stream and one event, then sends nothing more until the test ends, and returns its
// URL: what an idle deadline must end.
func Stalling(t testing.TB) string {
	t.Helper()
	release := make(chan struct{}) // closed at cleanup: every held answer ends
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if _, err := io.WriteString(w, `data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Thinking"}}]}`+"\n\n"); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{}) // closed when Serve returns
	go func() { defer close(served); srv.Serve(ln) }()
	t.Cleanup(func() {
		close(release)
		srv.Close()
		<-served
	})
	return "http://" + ln.Addr().String()
}
