package console_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
)

// TestServer_Run checks that shutting down ends open event streams instead of waiting
// for them, and that Run then returns without error.
func TestServer_Run(t *testing.T) {
	ts := newTestServer(t, console.Config{})
	srv, err := console.New(console.Config{Identity: ts.a.Directory(), Authority: ts.a})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1) // written once by the Run goroutine
	go func() { done <- srv.Run(ctx, ln) }()

	req, err := http.NewRequestWithContext(t.Context(), "GET", "http://"+ln.Addr().String()+"/api/v1/events?project=default", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	readSSE(t, r) // the stream is open and serving

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	// The stream ends once the server shut down: reading reaches its end.
	for {
		if _, err := r.ReadString('\n'); err != nil {
			break
		}
	}
}
