package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
)

// webhookSink is a webhook receiver for scripts: it listens on loopback, writes its URL to
// sink.url and appends each post's notice id header and body, one line each, to sink.log.
func webhookSink() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile("sink.log", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		defer f.Close()
		fmt.Fprintf(f, "%s %s signature=%t\n%s\n", r.Method, r.Header.Get("Docket-Notice-Id"), r.Header.Get("Signature") != "", body)
	})}
	url := "http://" + ln.Addr().String() + "/services/T0/B0/sinksecret"
	if err := os.WriteFile("sink.url.tmp", []byte(url), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Rename("sink.url.tmp", "sink.url"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
