package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// flushes records, for each tool call's POST, what each flush of its response sent.
type flushes struct {
	mu    sync.Mutex
	calls map[string][][]byte // by tool name: the bytes each flush sent, the last call's
	done  chan string         // the tool of each response recorded, once its handler returned
}

func (f *flushes) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var tool string
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			for _, name := range []string{contract.ToolQueryBoard, contract.ToolApplyBatch} {
				if bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, []byte(`"name":"`+name+`"`)) {
					tool = name
				}
			}
		}
		if tool == "" {
			h.ServeHTTP(w, r)
			return
		}
		fw := &flushWriter{ResponseWriter: w}
		h.ServeHTTP(fw, r)
		f.mu.Lock()
		f.calls[tool] = append(fw.sent, fw.pending)
		f.mu.Unlock()
		f.done <- tool
	})
}

// of returns what the response of the call of tool sent, once it was recorded.
func (f *flushes) of(t *testing.T, tool string) [][]byte {
	t.Helper()
	for got := ""; got != tool; {
		select {
		case got = <-f.done:
		case <-t.Context().Done():
			t.Fatalf("no response of %s recorded", tool)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

// flushWriter keeps what was written since the last flush, and what each flush sent.
type flushWriter struct {
	http.ResponseWriter
	pending []byte
	sent    [][]byte
}

func (w *flushWriter) Write(b []byte) (int, error) {
	w.pending = append(w.pending, b...)
	return w.ResponseWriter.Write(b)
}

func (w *flushWriter) FlushError() error {
	w.sent = append(w.sent, w.pending)
	w.pending = nil
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *flushWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestGateway_PrimingEvent: a read's event stream sends its priming event (an id and no
// data) in one write with its answer, so the client reads both at once; a write's stream
// sends it alone before the write runs, so that a held call's stream can be resumed from
// its start (docs/mcp.md, "One client per Agent").
func TestGateway_PrimingEvent(t *testing.T) {
	rec := &flushes{calls: map[string][][]byte{}, done: make(chan string, 16)}
	f := newConfiguredFixture(t, fixtureConfig{ops: operation.Config{HoldBound: time.Second}, wrap: rec.wrap})
	cs := f.connect(t, nil)
	tests := []struct {
		name      string
		tool      string
		args      any
		withFirst bool // the first flush carries the answer with the priming event
	}{
		{"read", contract.ToolQueryBoard, contract.QueryBoardInput{}, true},
		{"write", contract.ToolApplyBatch, contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: "item", Args: contract.Args{"n": str("1")}}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res, _ := call(t, cs, tt.tool, tt.args); !res.Accepted {
				t.Fatalf("%s: %s %s", tt.tool, res.ErrorCode, res.Teaching)
			}
			sent := rec.of(t, tt.tool)
			first := string(sent[0])
			if !strings.HasPrefix(first, "event: prime\nid: ") {
				t.Fatalf("first flush of %s = %q; want the priming event first", tt.tool, first)
			}
			if got := strings.Contains(first, `"result"`); got != tt.withFirst {
				t.Errorf("first flush of %s carries the answer: %v, want %v; it sent %q", tt.tool, got, tt.withFirst, first)
			}
			if all := string(bytes.Join(sent, nil)); strings.Count(all, "event: prime") != 1 || !strings.Contains(all, `"result"`) {
				t.Errorf("response of %s = %q; want one priming event and the answer", tt.tool, all)
			}
		})
	}
}
