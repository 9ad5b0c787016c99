package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// The gateway where MCP 2025-11-25 says how a server answers.

// TestSpec_InitializeOtherVersion: an initialize asking for another version is answered
// with the one the gateway speaks, and the client decides; the SDK client accepts it.
func TestSpec_InitializeOtherVersion(t *testing.T) {
	f := newFixture(t, time.Second)
	for _, v := range []string{"2025-06-18", "2024-11-05", "1999-01-01"} {
		resp, data := rawDo(t, f.url, map[string]string{"Authorization": "Bearer " + f.token}, strings.ReplaceAll(initBody, "%q", `"`+v+`"`))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"protocolVersion":"`+contract.ProtocolVersion+`"`) {
			t.Errorf("initialize asking for %s = %d %s, want 200 answering %s", v, resp.StatusCode, data, contract.ProtocolVersion)
		}
	}
	// The same through the official SDK's client, asking for an older version, and with
	// its default (server/discover at 2026-07-28, then initialize).
	for _, v := range []string{"2025-06-18", ""} {
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: f.url, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearer{token: f.token, next: http.DefaultTransport}}}
		cs, err := c.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatalf("Connect asking for %q: %v", v, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != contract.ProtocolVersion {
			t.Errorf("asking for %q, the session speaks %q, want %q", v, got, contract.ProtocolVersion)
		}
		call(t, cs, contract.ToolQueryBoard, struct{}{})
		if err := cs.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestSpec_Unauthorized: a 401 names the scheme it wants (RFC 6750 §3).
func TestSpec_Unauthorized(t *testing.T) {
	f := newFixture(t, time.Second)
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer dkt_agt_nope"}} {
		resp, _ := rawDo(t, f.url, h, strings.ReplaceAll(initBody, "%q", `"`+contract.ProtocolVersion+`"`))
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(got, "Bearer ") {
			t.Errorf("with %v: %d, WWW-Authenticate %q; want 401 and a Bearer challenge", h, resp.StatusCode, got)
		}
	}
}

// TestSpec_SessionRequired: a request other than initialize without Mcp-Session-Id is
// 400 and opens no session.
func TestSpec_SessionRequired(t *testing.T) {
	f := newFixture(t, time.Second)
	before := f.gw.OpenSessions()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"QueryBoard","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
	} {
		status, e := rawPost(t, f.url, map[string]string{"Authorization": "Bearer " + f.token, "Mcp-Protocol-Version": contract.ProtocolVersion}, body)
		if status != http.StatusBadRequest || e.Error.Code != contract.RPCCodeServer || e.Error.Data.Reason != contract.ReasonSessionRequired {
			t.Errorf("%s without a session = %d %+v, want 400 %s", body, status, e.Error, contract.ReasonSessionRequired)
		}
	}
	if got := f.gw.OpenSessions(); got != before {
		t.Errorf("open sessions = %d after sessionless calls, want %d (no orphan)", got, before)
	}
}

// TestSpec_NoBatches: a JSON-RPC batch is refused, a batched initialize included, and a
// request without the version header on a session follows the session's version (the
// SDK alone would take it for 2025-03-26 and serve the batch, without priming events).
func TestSpec_NoBatches(t *testing.T) {
	f := newFixture(t, time.Second)
	auth := "Bearer " + f.token
	cs := f.connect(t, nil)
	tests := []struct {
		name    string
		headers map[string]string
		body    string
	}{
		{"batched initialize", map[string]string{"Authorization": auth}, "[" + strings.ReplaceAll(initBody, "%q", `"`+contract.ProtocolVersion+`"`) + "]"},
		{"batch on a session, no version header", map[string]string{"Authorization": auth, "Mcp-Session-Id": cs.ID()}, ` [{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`},
		{"batch on a session", map[string]string{"Authorization": auth, "Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": contract.ProtocolVersion}, `[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := rawPost(t, f.url, tt.headers, tt.body)
			if status != http.StatusBadRequest || e.Error.Data.Reason != contract.ReasonBatchUnsupported {
				t.Errorf("= %d %+v, want 400 %s", status, e.Error, contract.ReasonBatchUnsupported)
			}
		})
	}
	// A call without the version header is served as 2025-11-25: its event stream opens
	// with a priming event (an id and no data) before the answer.
	resp, data := rawDo(t, f.url, map[string]string{"Authorization": auth, "Mcp-Session-Id": cs.ID()},
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"QueryBoard","arguments":{}}}`)
	first, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n\n")
	if resp.StatusCode != http.StatusOK || !strings.Contains(first, "\nid: ") || strings.Contains(first, `"result"`) {
		t.Errorf("call without the version header = %d, first event %q; want 200 and a priming event", resp.StatusCode, first)
	}
}

// TestSpec_StrictArguments: tool arguments are read strictly at /mcp, through the SDK
// client and a real listener: {"action":"read_text","ACTION":"write_text"} ran
// write_text, because Go matches keys regardless of case while other readers see
// read_text.
func TestSpec_StrictArguments(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	tests := []struct {
		name, tool, args string
		code             contract.Code
	}{
		{"case-variant keys", contract.ToolApplyAction, `{"action":"read_text","ACTION":"write_text"}`, contract.CodeCaseVariantKey},
		{"a case-variant field alone", contract.ToolApplyAction, `{"ACTION":"note"}`, contract.CodeCaseVariantKey},
		{"a duplicate key", contract.ToolApplyAction, `{"action":"note","action":"fetch"}`, contract.CodeDuplicateKey},
		{"null for a number", contract.ToolQueryBoard, `{"limit":null}`, contract.CodeNullField},
		{"a lone surrogate", contract.ToolApplyAction, `{"action":"note","params":{"topic":"\ud800"}}`, contract.CodeInvalidUTF8},
		{"case-variant params", contract.ToolApplyAction, `{"action":"note","params":{"topic":"a","TOPIC":"b"}}`, contract.CodeCaseVariantKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := decodeResult(t, res)
			if got.Accepted || got.ErrorCode != tt.code || got.Teaching == "" {
				t.Errorf("%s(%s) = accepted %v, %q %q; want refused %q with a teaching", tt.tool, tt.args, got.Accepted, got.ErrorCode, got.Teaching, tt.code)
			}
		})
	}
	// The whole JSON-RPC message is read strictly too: "NAME" beside "name" is refused
	// before the SDK, which would read the last one.
	status, e := rawPost(t, f.url, map[string]string{"Authorization": "Bearer " + f.token, "Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": contract.ProtocolVersion},
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"QueryBoard","NAME":"ApplyAction","arguments":{}}}`)
	if status != http.StatusBadRequest || e.Error.Data.Reason != string(contract.CodeCaseVariantKey) {
		t.Errorf("case-variant envelope = %d %+v, want 400 %s", status, e.Error, contract.CodeCaseVariantKey)
	}
}

// TestSpec_RefusalTableDocumented: every transport refusal a client can get is a row of
// docs/mcp.md's refusal table, with the status it is sent with.
func TestSpec_RefusalTableDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for reason, status := range map[string]int{
		contract.ReasonUnauthenticated:     401,
		contract.ReasonUnsupportedProtocol: 400,
		contract.ReasonSessionRequired:     400,
		contract.ReasonBatchUnsupported:    400,
		contract.ReasonConnectionReplaced:  409,
		contract.ReasonUnknownSession:      404,
		"body_too_large":                   413,
	} {
		if !strings.Contains(doc, fmt.Sprintf("| %d | `%s`", status, reason)) {
			t.Errorf("docs/mcp.md has no row | %d | `%s`", status, reason)
		}
	}
	for _, code := range []contract.Code{contract.CodeDuplicateKey, contract.CodeCaseVariantKey, contract.CodeNullField, contract.CodeInvalidUTF8} {
		if !strings.Contains(doc, "`"+string(code)+"`") {
			t.Errorf("docs/mcp.md does not name %s", code)
		}
	}
}

// TestSpec_NoStandaloneStream: a GET without Last-Event-ID on a live session is 405 with
// an Allow header (the transport lets a server offer no standalone stream), and the
// official SDK client goes on without one: its calls are answered on their own streams.
func TestSpec_NoStandaloneStream(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", contract.ProtocolVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e rpcErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("decode the 405 body: %v", err)
	}
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST, DELETE" || e.Error.Data.Reason != contract.ReasonNoStandaloneStream {
		t.Errorf("GET without Last-Event-ID = %d, Allow %q, %+v; want 405, Allow POST, DELETE and %s",
			resp.StatusCode, resp.Header.Get("Allow"), e.Error, contract.ReasonNoStandaloneStream)
	}
	if res, _ := call(t, cs, contract.ToolQueryBoard, struct{}{}); !res.Accepted {
		t.Errorf("QueryBoard after the refused GET: %s %s", res.ErrorCode, res.Teaching)
	}
}
