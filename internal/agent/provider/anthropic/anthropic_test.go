package anthropic_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/anthropic"
	"github.com/docketrun/docket/internal/contract"
)

// reply is what the fake endpoint answers.
type reply struct {
	status  int
	headers map[string]string
	body    string
}

// captured is what the fake endpoint received.
type captured struct {
	mu      sync.Mutex
	path    string
	headers http.Header
	body    []byte
}

// serve starts a Messages API endpoint that answers every request with r.
func serve(t *testing.T, r reply) (string, *captured) {
	t.Helper()
	got := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		got.mu.Lock()
		got.path, got.headers, got.body = req.URL.Path, req.Header.Clone(), b
		got.mu.Unlock()
		for k, v := range r.headers {
			w.Header().Set(k, v)
		}
		if r.status == 0 {
			w.Header().Set("content-type", "text/event-stream")
			r.status = http.StatusOK
		}
		w.WriteHeader(r.status)
		// Echo the key wherever the reply names it, as a careless server might.
		io.WriteString(w, strings.ReplaceAll(r.body, "$KEY", req.Header.Get("x-api-key")))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

func newClient(t *testing.T, url string, key agent.Key) *anthropic.Client {
	t.Helper()
	c, err := anthropic.New(anthropic.Config{URL: url, Model: "claude-test", Key: key, MaxTokens: 1000,
		Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sseBody writes events as the API streams them.
func sseBody(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var typ struct{ Type string }
		json.Unmarshal([]byte(e), &typ)
		b.WriteString("event: " + typ.Type + "\ndata: " + e + "\n\n")
	}
	return b.String()
}

var toolUseStream = sseBody(
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":120,"cache_read_input_tokens":30,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"ping"}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Opening "}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the case."}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"OpenCase","input":{}}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"caseType\": \"ca"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"lc\"}"}}`,
	`{"type":"content_block_stop","index":1}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"QueryBoard","input":{}}}`,
	`{"type":"content_block_stop","index":2}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`,
	`{"type":"message_stop"}`,
)

// conversation has a completed tool round so the request shows tool_use and tool_result.
var conversation = agent.Request{
	System: "be careful",
	Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "compute the total"},
		{Role: agent.RoleAssistant, Text: "Looking first.", Calls: []agent.ToolCall{{ID: "toolu_0", Name: "QueryBoard", Arguments: json.RawMessage(`{"focus":"all"}`)}}},
		{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "toolu_0", Content: `{"accepted":true}`}}, Text: "go on"},
	},
	Tools: []agent.ToolDef{{Name: "OpenCase", Description: "opens a case", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

func TestClient_Turn(t *testing.T) {
	url, got := serve(t, reply{body: toolUseStream})
	c := newClient(t, url, agent.NewKey("sk-test"))
	var deltas []agent.Delta
	resp, err := c.Turn(t.Context(), conversation, func(d agent.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Response{
		Message: agent.Message{Role: agent.RoleAssistant, Text: "Opening the case.", Calls: []agent.ToolCall{
			{ID: "toolu_1", Name: "OpenCase", Arguments: json.RawMessage(`{"caseType": "calc"}`)},
			{ID: "toolu_2", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)},
		}},
		Stop:      agent.StopToolUse,
		Usage:     agent.Usage{InputTokens: 150, OutputTokens: 42},
		RequestID: "msg_1", // no request-id header: the message's id
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("Turn response (-want +got):\n%s", diff)
	}
	wantDeltas := []agent.Delta{
		{Kind: agent.DeltaText, Text: "Opening "},
		{Kind: agent.DeltaText, Text: "the case."},
		{Kind: agent.DeltaToolCall, Index: 0, ID: "toolu_1", Name: "OpenCase"},
		{Kind: agent.DeltaToolArgs, Index: 0, Text: ""},
		{Kind: agent.DeltaToolArgs, Index: 0, Text: `{"caseType": "ca`},
		{Kind: agent.DeltaToolArgs, Index: 0, Text: `lc"}`},
		{Kind: agent.DeltaToolCall, Index: 1, ID: "toolu_2", Name: "QueryBoard"},
	}
	if diff := cmp.Diff(wantDeltas, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}

	if got.path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", got.path)
	}
	for h, v := range map[string]string{"x-api-key": "sk-test", "anthropic-version": anthropic.DefaultVersion, "content-type": "application/json"} {
		if g := got.headers.Get(h); g != v {
			t.Errorf("header %s = %q, want %q", h, g, v)
		}
	}
	var body any
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	var wantBody any
	json.Unmarshal([]byte(`{
		"model": "claude-test", "max_tokens": 1000, "system": "be careful", "stream": true,
		"tools": [{"name": "OpenCase", "description": "opens a case", "input_schema": {"type": "object"}}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "compute the total"}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "Looking first."},
				{"type": "tool_use", "id": "toolu_0", "name": "QueryBoard", "input": {"focus": "all"}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_0", "content": "{\"accepted\":true}"},
				{"type": "text", "text": "go on"}]}
		]}`), &wantBody)
	if diff := cmp.Diff(wantBody, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestClient_Turn_requestID: the request-id header, when the API sends one, is the
// request id the record keeps, before the message's id.
func TestClient_Turn_requestID(t *testing.T) {
	url, _ := serve(t, reply{headers: map[string]string{"request-id": "req_011CQ"}, body: toolUseStream})
	resp, err := newClient(t, url, agent.NewKey("k")).Turn(t.Context(), conversation, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.RequestID != "req_011CQ" {
		t.Errorf("RequestID = %q, want the request-id header req_011CQ", resp.RequestID)
	}
}

func TestClient_Turn_endTurn(t *testing.T) {
	url, _ := serve(t, reply{body: sseBody(
		`{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Done"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`,
	)})
	resp, err := newClient(t, url, agent.NewKey("k")).Turn(t.Context(), conversation, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: "Done"}, Stop: agent.StopMaxTokens, Usage: agent.Usage{InputTokens: 5, OutputTokens: 3}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("Turn response (-want +got):\n%s", diff)
	}
}

func TestClient_Turn_httpErrors(t *testing.T) {
	tests := []struct {
		name      string
		reply     reply
		kind      agent.ErrorKind
		code      contract.Code
		retryable bool
		after     time.Duration
	}{
		{"unauthorized", reply{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}, agent.KindAuth, contract.CodeModelAuth, false, 0},
		{"forbidden", reply{status: 403, body: `{"type":"error","error":{"type":"permission_error","message":"no"}}`}, agent.KindAuth, contract.CodeModelAuth, false, 0},
		{"rate limited", reply{status: 429, headers: map[string]string{"retry-after": "7"}, body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`}, agent.KindRateLimit, contract.CodeModelRateLimited, true, 7 * time.Second},
		{"rate limited until a date", reply{status: 429, headers: map[string]string{"retry-after": "Thu, 01 Jan 2026 00:01:00 GMT"}, body: `{}`}, agent.KindRateLimit, contract.CodeModelRateLimited, true, time.Minute},
		{"context length", reply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`}, agent.KindContextLength, contract.CodeModelContextLength, false, 0},
		{"other bad request", reply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`}, agent.KindBadRequest, contract.CodeModelBadRequest, false, 0},
		{"server error", reply{status: 500, body: `{"type":"error","error":{"type":"api_error","message":"internal"}}`}, agent.KindServer, contract.CodeModelServer, true, 0},
		{"overloaded", reply{status: 529, headers: map[string]string{"retry-after": "2"}, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, agent.KindServer, contract.CodeModelServer, true, 2 * time.Second},
		{"html from a proxy", reply{status: 502, body: `<html>bad gateway</html>`}, agent.KindServer, contract.CodeModelServer, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := serve(t, tt.reply)
			_, err := newClient(t, url, agent.NewKey("k")).Turn(t.Context(), conversation, nil)
			pe, ok := errors.AsType[*agent.ProviderError](err)
			if !ok {
				t.Fatalf("Turn error = %v, want *agent.ProviderError", err)
			}
			if pe.Kind != tt.kind || pe.Code() != tt.code || pe.Retryable() != tt.retryable || pe.RetryAfter() != tt.after || pe.Status != tt.reply.status {
				t.Errorf("Turn error = %+v (code %s, retryable %v, after %v), want kind %s code %s retryable %v after %v status %d",
					pe, pe.Code(), pe.Retryable(), pe.RetryAfter(), tt.kind, tt.code, tt.retryable, tt.after, tt.reply.status)
			}
		})
	}
}

func TestClient_Turn_malformedStream(t *testing.T) {
	start := `{"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`
	textStart := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	tests := []struct {
		name string
		body string
		kind agent.ErrorKind
	}{
		{"truncated JSON", sseBody(start) + "event: content_block_start\ndata: {\"type\":\"content_block_st\n\n", agent.KindStream},
		{"missing message_stop", sseBody(start, textStart, `{"type":"content_block_stop","index":0}`), agent.KindStream},
		{"cut inside an event", sseBody(start) + "event: ping\ndata: {\"type\":\"ping\"}", agent.KindStream},
		{"garbage line", sseBody(start) + "this is not sse\n\n" + sseBody(`{"type":"message_stop"}`), agent.KindStream},
		{"delta before block start", sseBody(start, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`), agent.KindStream},
		{"block before message_start", sseBody(textStart), agent.KindStream},
		{"tool arguments not an object", sseBody(start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"QueryBoard","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"[1,"}}`,
			`{"type":"content_block_stop","index":0}`, `{"type":"message_stop"}`), agent.KindStream},
		{"block left open", sseBody(start, textStart, `{"type":"message_stop"}`), agent.KindStream},
		{"overloaded mid-stream", sseBody(start, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), agent.KindServer},
		{"empty body", "", agent.KindStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := serve(t, reply{body: tt.body})
			_, err := newClient(t, url, agent.NewKey("k")).Turn(t.Context(), conversation, nil)
			pe, ok := errors.AsType[*agent.ProviderError](err)
			if !ok || pe.Kind != tt.kind {
				t.Fatalf("Turn error = %v, want a %s *agent.ProviderError", err, tt.kind)
			}
		})
	}
}

func TestClient_Turn_invalidRequest(t *testing.T) {
	url, got := serve(t, reply{body: toolUseStream})
	req := agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "hi"},
		{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "a", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}},
		{Role: agent.RoleUser, Text: "no result"},
	}}
	_, err := newClient(t, url, agent.NewKey("k")).Turn(t.Context(), req, nil)
	if contract.CodeOf(err) != contract.CodeInvalidArgument {
		t.Fatalf("Turn error = %v, want %s", err, contract.CodeInvalidArgument)
	}
	if got.body != nil {
		t.Errorf("an invalid request reached the endpoint")
	}
}

func TestClient_Turn_canceled(t *testing.T) {
	url, _ := serve(t, reply{body: toolUseStream})
	ctx, cancel := contextCanceled(t)
	cancel()
	_, err := newClient(t, url, agent.NewKey("k")).Turn(ctx, conversation, nil)
	if !errors.Is(err, errCanceled) {
		t.Fatalf("Turn error = %v, want the context's cause", err)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  anthropic.Config
	}{
		{"no model", anthropic.Config{Key: agent.NewKey("k")}},
		{"no key", anthropic.Config{Model: "m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := anthropic.New(tt.cfg); contract.CodeOf(err) != contract.CodeModelConfig {
				t.Errorf("New(%+v) error = %v, want %s", tt.cfg, err, contract.CodeModelConfig)
			}
		})
	}
}

// TestClient_Turn_thinking: thinking on enables extended thinking with half the answer's
// tokens as its budget (max_tokens raised when it would not be above it), off disables
// it, and the default sends no parameter. Thinking and redacted_thinking blocks are kept
// apart from the answer with their signatures, and sent back first in the assistant
// message they came with; reasoning without a signature (from another provider) is not.
func TestClient_Turn_thinking(t *testing.T) {
	stream := sseBody(
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-abc"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Done."}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
		`{"type":"message_stop"}`)
	for _, tt := range []struct {
		thinking  agent.Thinking
		maxTokens int
		want      string
		wantMax   int
	}{
		{agent.ThinkingDefault, 1000, "", 1000},
		{agent.ThinkingOn, 8192, `{"type":"enabled","budget_tokens":4096}`, 8192},
		{agent.ThinkingOn, 1000, `{"type":"enabled","budget_tokens":1024}`, 2048},
		{agent.ThinkingOff, 1000, `{"type":"disabled"}`, 1000},
	} {
		url, got := serve(t, reply{body: stream})
		c, err := anthropic.New(anthropic.Config{URL: url, Model: "claude-test", Key: agent.NewKey("k"), MaxTokens: tt.maxTokens, Thinking: tt.thinking})
		if err != nil {
			t.Fatal(err)
		}
		req := agent.Request{Messages: []agent.Message{
			{Role: agent.RoleUser, Text: "go"},
			{Role: agent.RoleAssistant, Reasoning: []agent.Reasoning{{Text: "signed", Signature: "sig-1"}, {Redacted: "opaque-1"}, {Text: "from deepseek"}},
				Calls: []agent.ToolCall{{ID: "t1", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "t1", Content: "{}"}}},
		}}
		resp, err := c.Turn(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantReasoning := []agent.Reasoning{{Text: "Let me think.", Signature: "sig-abc"}, {Redacted: "opaque"}}
		if resp.Message.Text != "Done." || !cmp.Equal(resp.Message.Reasoning, wantReasoning) {
			t.Errorf("thinking %q: message %+v, want the thinking apart from the answer, signed", tt.thinking, resp.Message)
		}
		var body struct {
			MaxTokens int             `json:"max_tokens"`
			Thinking  json.RawMessage `json:"thinking"`
			Messages  []struct {
				Content []map[string]any `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(got.body, &body); err != nil {
			t.Fatal(err)
		}
		if string(body.Thinking) != tt.want || body.MaxTokens != tt.wantMax {
			t.Errorf("thinking %q sent %s with max_tokens %d, want %s with %d", tt.thinking, body.Thinking, body.MaxTokens, tt.want, tt.wantMax)
		}
		blocks := body.Messages[1].Content
		if len(blocks) != 3 || blocks[0]["type"] != "thinking" || blocks[0]["signature"] != "sig-1" || blocks[0]["thinking"] != "signed" ||
			blocks[1]["type"] != "redacted_thinking" || blocks[1]["data"] != "opaque-1" || blocks[2]["type"] != "tool_use" {
			t.Errorf("thinking %q: the assistant message went as %v, want its signed thinking, its redacted thinking, then its tool_use", tt.thinking, blocks)
		}
	}
}
