package openai_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/contract"
)

// silentServer accepts connections on a real listener and never answers; it holds each
// until the test ends.
func silentServer(t *testing.T) string {
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

// stallingServer answers with the headers of a stream and one event, then sends nothing
// until the test ends.
func stallingServer(t *testing.T) string {
	t.Helper()
	release := make(chan struct{}) // closed at cleanup: every held answer ends
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-release
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

// A model server that accepts the connection and never answers, or starts an answer and
// stops, fails the turn at its deadline with model_stalled, naming the wait; while it
// waits, the Watch says on what (docs/workbench.md, Model deadlines).
func TestClient_Deadlines(t *testing.T) {
	tests := []struct {
		name  string
		url   func(*testing.T) string
		phase string
		says  string
	}{
		{"accepts and never answers", silentServer, contract.RunWaitFirstByte, "sent no first byte within 300ms"},
		{"sends headers then stalls", stallingServer, contract.RunWaitIdle, "sent nothing for 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url(t)
			watch := &agent.Watch{}
			c, err := openai.New(openai.Config{URL: url, Model: "m", Deadlines: agent.Deadlines{FirstByte: 300 * time.Millisecond, Idle: 300 * time.Millisecond, Watch: watch}})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1) // written once, when the turn ends
			go func() {
				_, err := c.Turn(t.Context(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "hi"}}}, nil)
				done <- err
			}()
			var seen []agent.ModelWait // the waits the Watch showed while the turn ran
			var err2 error
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			bound := time.NewTimer(30 * time.Second)
			defer bound.Stop()
		wait:
			for {
				select {
				case err2 = <-done:
					break wait
				case <-tick.C:
					if w, ok := watch.Current(); ok {
						seen = append(seen, w)
					}
				case <-bound.C:
					t.Fatal("the turn never ended: the deadline did not hold")
				}
			}
			pe, ok := errors.AsType[*agent.ProviderError](err2)
			if !ok || pe.Kind != agent.KindStalled || pe.Code() != contract.CodeModelStalled || pe.Retryable() {
				t.Fatalf("Turn = %v, want a *ProviderError of kind stalled (model_stalled, not retried)", err2)
			}
			if !strings.Contains(err2.Error(), tt.says) || !strings.Contains(err2.Error(), url) {
				t.Errorf("Turn = %q, want it to name the model at %s and say %q", err2, url, tt.says)
			}
			if _, ok := watch.Current(); ok {
				t.Errorf("the Watch still shows a wait after the turn ended")
			}
			var phases []string
			for _, w := range seen {
				if w.Origin != url || !w.Deadline.After(w.Since) {
					t.Errorf("the Watch showed %+v, want the wait at %s with a deadline after its start", w, url)
				}
				phases = append(phases, w.Phase)
			}
			if len(phases) == 0 || phases[len(phases)-1] != tt.phase {
				t.Errorf("the Watch showed phases %v, want it to end in %s", phases, tt.phase)
			}
		})
	}
}
