package console_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// runServer serves cfg with [console.Server.Run] on a real loopback listener, the way
// docket serve does, over the authority of a [newTestServer], and returns its address
// and the test server. Run ends, and must end without error, when the test does.
func runServer(t *testing.T, cfg console.Config) (string, *testServer) {
	t.Helper()
	ts := newTestServer(t, console.Config{})
	cfg.Identity, cfg.Authority = ts.a.Directory(), ts.a
	srv, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1) // written once by the Run goroutine
	go func() { done <- srv.Run(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel = %v, want nil", err)
		}
	})
	return ln.Addr().String(), ts
}

// TestListener_SlowBody: a body that dribbles in is cut at the body timeout, rather than
// holding its connection (and a file descriptor) for as long as its sender likes.
func TestListener_SlowBody(t *testing.T) {
	addr, _ := runServer(t, console.Config{BodyTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/v1/sessions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", addr)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = io.ReadAll(c) // the answer, if any, then the end of the connection
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("a slow body still holds its connection after %v", time.Since(start))
	}
}

// holdRoute reads its body, then holds its answer for four times bound, as a held /mcp
// call does; the test fails if the answer's context ends first.
func holdRoute(t *testing.T, bound time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(4 * bound):
			io.WriteString(w, "held")
		case <-r.Context().Done():
			t.Errorf("the held answer's context ended: %v", context.Cause(r.Context()))
		}
	})
}

// TestListener_LongAnswer: the body deadline bounds reading, not answering: a handler
// that has read its body and holds its answer for longer (a held /mcp call, a /work
// poll) is neither cut nor cancelled.
func TestListener_LongAnswer(t *testing.T) {
	const bound = 200 * time.Millisecond
	addr, _ := runServer(t, console.Config{BodyTimeout: bound, Routes: map[string]http.Handler{"POST /hold": holdRoute(t, bound)}})
	resp, err := http.Post("http://"+addr+"/hold", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "held" {
		t.Errorf("held answer = %q, %v; want held", b, err)
	}
}

// TestListener_ConnCap: with every connection slot held by clients that send nothing, a
// new client waits, and is answered once the header timeout frees a slot.
func TestListener_ConnCap(t *testing.T) {
	addr, _ := runServer(t, console.Config{MaxConns: 4, HeaderTimeout: 300 * time.Millisecond})
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get("http://" + addr + "/api/v1/health")
	if err != nil {
		t.Fatalf("health behind held slots: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health = %d, want 200", resp.StatusCode)
	}
}

// TestListener_ConnBound: past the bound a connection is not served until a slot frees.
func TestListener_ConnBound(t *testing.T) {
	addr, _ := runServer(t, console.Config{MaxConns: 2})
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	time.Sleep(100 * time.Millisecond) // let the server accept both
	c, err := net.Dial("tcp", addr)    // completes in the kernel's backlog
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/v1/health HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
	if err := c.SetReadDeadline(time.Now().Add(500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(c); err == nil || len(b) > 0 {
		t.Fatalf("a third connection was served past a bound of 2: %q, %v", b, err)
	}
	if err := idle[0].Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 200") {
		t.Errorf("once a slot freed: %q, %v; want 200", b, err)
	}
}

// TestLogin_RateLimit: logins are token buckets per name and in all; a refusal is 429
// rate_limited with Retry-After.
func TestLogin_RateLimit(t *testing.T) {
	s := newTestServer(t, console.Config{Logins: console.LoginLimits{Burst: 2, Every: time.Hour, GlobalBurst: 4, GlobalEvery: time.Hour}})
	login := func(name string) (*http.Response, []byte) {
		return s.do(t, request{method: "POST", path: "/api/v1/sessions", body: `{"name":"` + name + `","passphrase":"` + testPassphrase + `"}`})
	}
	for i, want := range []int{201, 201, 429} {
		resp, b := login("ada")
		if resp.StatusCode != want {
			t.Fatalf("login %d = %d %s, want %d", i, resp.StatusCode, b, want)
		}
		if want == 429 {
			if e := decode[contract.Error](t, b); e.Code != contract.CodeRateLimited || e.Teaching == "" || resp.Header.Get("Retry-After") == "" {
				t.Errorf("refusal = %s, Retry-After %q; want rate_limited with a teaching and Retry-After", b, resp.Header.Get("Retry-After"))
			}
		}
	}
	// Another name has its own bucket, until the global one is empty too.
	if resp, b := login("eve"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("another name = %d %s, want 401 (its own bucket)", resp.StatusCode, b)
	}
	if resp, _ := login("bob"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("past the global burst = %d, want 429", resp.StatusCode)
	}
}

// h2cClient speaks HTTP/2 without TLS only (prior knowledge), as the agent runtime does
// to docket serve, over at most one connection.
func h2cClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = new(http.Protocols)
	t.Protocols.SetUnencryptedHTTP2(true)
	t.MaxConnsPerHost = 1
	return &http.Client{Transport: t, Timeout: timeout}
}

// TestListener_HTTP2: the listener speaks HTTP/2 without TLS beside HTTP/1.1, and its
// bounds hold per stream: the Host check refuses a foreign :authority, a body that
// dribbles in is cut at the body timeout while another stream of the same connection is
// answered, and a held answer whose body was read is not cut.
func TestListener_HTTP2(t *testing.T) {
	const bound = 300 * time.Millisecond
	addr, _ := runServer(t, console.Config{BodyTimeout: bound, Routes: map[string]http.Handler{"POST /hold": holdRoute(t, bound)}})
	client := h2cClient(20 * time.Second)

	resp, err := client.Get("http://" + addr + "/api/v1/health")
	if err != nil {
		t.Fatalf("health over h2c: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Fatalf("health over h2c = %d %s, want 200 over HTTP/2", resp.StatusCode, resp.Proto)
	}

	foreign, err := http.NewRequest("GET", "http://"+addr+"/api/v1/health", nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign.Host = "evil.example"
	if resp, err := client.Do(foreign); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign :authority over h2c = %d, want 403", resp.StatusCode)
	}

	// A body that sends one byte, then nothing: its stream must end well before the
	// client gives up, while the connection keeps serving.
	body, send := io.Pipe()
	defer send.Close()
	go func() { _, _ = send.Write([]byte("{")) }() // the write ends when the stream is cut or read
	slow, err := http.NewRequest("POST", "http://"+addr+"/api/v1/sessions", body)
	if err != nil {
		t.Fatal(err)
	}
	slow.ContentLength = 100
	slowDone := make(chan error, 1) // written once by the slow request's goroutine
	go func() {
		resp, err := client.Do(slow)
		if err == nil {
			resp.Body.Close()
		}
		slowDone <- err
	}()
	held, err := client.Post("http://"+addr+"/hold", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("held answer beside a slow body: %v", err)
	}
	b, err := io.ReadAll(held.Body)
	held.Body.Close()
	if err != nil || string(b) != "held" || held.ProtoMajor != 2 {
		t.Errorf("held answer = %q %s, %v; want held over HTTP/2", b, held.Proto, err)
	}
	if err := <-slowDone; err != nil {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Errorf("a slow body over h2c still held its stream when the client gave up: %v", err)
		}
	}
}

// TestListener_HTTP2StreamBound: one HTTP/2 connection carries at most MaxStreams
// requests at once; a client past it takes another connection, which the connection
// bound counts.
func TestListener_HTTP2StreamBound(t *testing.T) {
	const streams, held = 2, 5
	arrived := make(chan string, held) // each held request's connection, as it arrives
	release := make(chan struct{})
	addr, _ := runServer(t, console.Config{MaxStreams: streams, Routes: map[string]http.Handler{
		"POST /hold": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- r.RemoteAddr
			<-release
			io.WriteString(w, "held")
		}),
	}})
	tr := h2cClient(20 * time.Second).Transport.(*http.Transport)
	tr.MaxConnsPerHost = 0 // a full connection makes the client dial another
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	resp, err := client.Get("http://" + addr + "/api/v1/health") // the connection and its settings
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	errs := make(chan error, held)
	perConn := map[string]int{}
	for range held {
		go func() {
			resp, err := client.Post("http://"+addr+"/hold", "application/json", strings.NewReader(`{}`))
			if err == nil {
				resp.Body.Close()
			}
			errs <- err
		}()
		perConn[<-arrived]++ // one at a time, so the client knows each connection's load
	}
	close(release)
	for range held {
		if err := <-errs; err != nil {
			t.Errorf("held request: %v", err)
		}
	}
	for conn, n := range perConn {
		if n > streams {
			t.Errorf("connection %s carried %d requests at once, want at most %d", conn, n, streams)
		}
	}
	if len(perConn) != (held+streams-1)/streams {
		t.Errorf("held requests came over %d connections (%v), want %d", len(perConn), perConn, (held+streams-1)/streams)
	}
}
