package mcpclient_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
	"github.com/docketrun/docket/internal/contract"
)

// cutCall stands between the client and the gateway: it answers the first tools/call
// itself with a stream that carries one progress event with an id and is then cut, and
// answers each stream resume (GET with Last-Event-ID) 409 as the MCP SDK does while the
// call is still held ("stream ID conflicts with ongoing stream"), conflicts times; then
// it answers the resume with the call's result. Everything else passes to the gateway.
type cutCall struct {
	base      http.RoundTripper
	conflicts int

	mu      sync.Mutex
	callID  json.RawMessage // the cut call's JSON-RPC id
	resumes int             // GETs with Last-Event-ID seen
}

func (c *cutCall) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		c.mu.Lock()
		first := json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && c.callID == nil
		if first {
			c.callID = msg.ID
		}
		c.mu.Unlock()
		if first {
			progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"docket-1","progress":1}}`
			return sse(req, "id: 0_0\nevent: message\ndata: "+progress+"\n\n"), nil
		}
	}
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" {
		c.mu.Lock()
		c.resumes++
		n, id := c.resumes, c.callID
		c.mu.Unlock()
		if n <= c.conflicts {
			return &http.Response{StatusCode: http.StatusConflict, Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
				Body: io.NopCloser(strings.NewReader("stream ID conflicts with ongoing stream\n")), Request: req}, nil
		}
		result := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\"accepted\":true}"}]}}`, id)
		return sse(req, "id: 0_1\nevent: message\ndata: "+result+"\n\n"), nil
	}
	return c.base.RoundTrip(req)
}

func sse(req *http.Request, body string) *http.Response {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}, "Mcp-Session-Id": {req.Header.Get("Mcp-Session-Id")}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}
}

// TestClient_ResumeConflictIsNotReplaced: a 409 answered to a stream resume while the
// call is still held is not a replaced connection, since only a 409 whose JSON-RPC data
// names connection_replaced means that (docs/mcp.md). The resume is tried again; once the
// held call's stream can be resumed its answer arrives; when it never can, the answer is
// lost (outcome unknown, never sent again) and the client goes on with a new session.
func TestClient_ResumeConflictIsNotReplaced(t *testing.T) {
	tests := []struct {
		name      string
		conflicts int
		lost      bool
	}{
		{"the resume succeeds once the call's stream is free", 2, false},
		{"the resume never succeeds", 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := gatewaytest.New(t)
			cut := &cutCall{base: http.DefaultTransport, conflicts: tt.conflicts}
			c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: gw.URL, Token: gatewaytest.Token, HTTP: &http.Client{Transport: cut}})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			t.Cleanup(func() { c.Close() })
			r, err := c.Call(t.Context(), "ApplyBatch", json.RawMessage(`{"operations":[]}`))
			switch {
			case errors.Is(err, mcpclient.ErrReplaced) || contract.CodeOf(err) == contract.ReasonConnectionReplaced:
				t.Fatalf("a 409 on resume read as a replaced connection: %v", err)
			case tt.lost && !errors.Is(err, agent.ErrOutcomeUnknown):
				t.Fatalf("Call = %+v, %v; want the answer lost (outcome unknown)", r, err)
			case !tt.lost && (err != nil || !strings.Contains(r.Text, "accepted")):
				t.Fatalf("Call = %+v, %v; want the resumed answer", r, err)
			}
			if _, err := c.Call(t.Context(), "QueryBoard", json.RawMessage(`{}`)); err != nil {
				t.Fatalf("the next call = %v; want it served (the client was not replaced)", err)
			}
			if n := len(gw.Calls()); n != 1 {
				t.Errorf("the gateway received %d calls, want only the next one (the cut call is never sent again)", n)
			}
		})
	}
}
