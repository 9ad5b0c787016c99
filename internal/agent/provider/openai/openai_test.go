package openai_test

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
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/contract"
)

type reply struct {
	status  int
	headers map[string]string
	body    string
}

type captured struct {
	mu      sync.Mutex
	path    string
	headers http.Header
	body    []byte
}

// serve starts a Chat Completions endpoint that answers every request with r; "$KEY" in
// the body is replaced with the bearer key it received, as a careless server might echo it.
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
		status := r.status
		if status == 0 {
			w.Header().Set("Content-Type", "text/event-stream")
			status = http.StatusOK
		}
		w.WriteHeader(status)
		key := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
		io.WriteString(w, strings.ReplaceAll(r.body, "$KEY", key))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

func newClient(t *testing.T, url string, key agent.Key) *openai.Client {
	t.Helper()
	c, err := openai.New(openai.Config{URL: url, Model: "gpt-test", Key: key,
		Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chunks writes each chunk as a data line, then [DONE].
func chunks(cs ...string) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

const done = "data: [DONE]\n\n"

// toolStream streams two tool calls whose arguments are split across chunks and
// interleaved by index, then a usage chunk.
var toolStream = chunks(
	`{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"content":"look."},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"OpenCase","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"caseT"}}]},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"QueryBoard","arguments":"{\"fo"}}]},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ype\":\"calc\"}"}}]},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"cus\":\"all\"}"}}]},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"c1","choices":[],"usage":{"prompt_tokens":321,"completion_tokens":54,"total_tokens":375}}`,
) + done

var conversation = agent.Request{
	System: "be careful",
	Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "compute the total"},
		{Role: agent.RoleAssistant, Calls: []agent.ToolCall{
			{ID: "call_0", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)},
			{ID: "call_1", Name: "ReadArtifact", Arguments: json.RawMessage(`{"ref":"a1"}`)},
		}},
		{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "call_1", Content: "rest"}, {CallID: "call_0", Content: `{"accepted":true}`, IsError: true}}, Text: "go on"},
	},
	Tools: []agent.ToolDef{{Name: "OpenCase", Description: "opens a case", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

func TestClient_Turn(t *testing.T) {
	url, got := serve(t, reply{body: toolStream})
	c := newClient(t, url+"/v1", agent.NewKey("sk-test"))
	var deltas []agent.Delta
	resp, err := c.Turn(t.Context(), conversation, func(d agent.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Response{
		Message: agent.Message{Role: agent.RoleAssistant, Text: "Let me look.", Calls: []agent.ToolCall{
			{ID: "call_a", Name: "OpenCase", Arguments: json.RawMessage(`{"caseType":"calc"}`)},
			{ID: "call_b", Name: "QueryBoard", Arguments: json.RawMessage(`{"focus":"all"}`)},
		}},
		Stop:      agent.StopToolUse,
		Usage:     agent.Usage{InputTokens: 321, OutputTokens: 54},
		RequestID: "c1", // no x-request-id header: the completion's id
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("Turn response (-want +got):\n%s", diff)
	}
	wantDeltas := []agent.Delta{
		{Kind: agent.DeltaText, Text: "Let me "},
		{Kind: agent.DeltaText, Text: "look."},
		{Kind: agent.DeltaToolCall, Index: 0, ID: "call_a", Name: "OpenCase"},
		{Kind: agent.DeltaToolArgs, Index: 0, Text: `{"caseT`},
		{Kind: agent.DeltaToolCall, Index: 1, ID: "call_b", Name: "QueryBoard"},
		{Kind: agent.DeltaToolArgs, Index: 1, Text: `{"fo`},
		{Kind: agent.DeltaToolArgs, Index: 0, Text: `ype":"calc"}`},
		{Kind: agent.DeltaToolArgs, Index: 1, Text: `cus":"all"}`},
	}
	if diff := cmp.Diff(wantDeltas, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if got.path != "/v1/chat/completions" {
		t.Errorf("path = %q, want /v1/chat/completions", got.path)
	}
	if a := got.headers.Get("Authorization"); a != "Bearer sk-test" {
		t.Errorf("Authorization = %q, want the bearer key", a)
	}
	var body, wantBody any
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(`{
		"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true},
		"tools": [{"type": "function", "function": {"name": "OpenCase", "description": "opens a case", "parameters": {"type": "object"}}}],
		"messages": [
			{"role": "system", "content": "be careful"},
			{"role": "user", "content": "compute the total"},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "call_0", "type": "function", "function": {"name": "QueryBoard", "arguments": "{}"}},
				{"id": "call_1", "type": "function", "function": {"name": "ReadArtifact", "arguments": "{\"ref\":\"a1\"}"}}]},
			{"role": "tool", "tool_call_id": "call_1", "content": "rest"},
			{"role": "tool", "tool_call_id": "call_0", "content": "{\"accepted\":true}"},
			{"role": "user", "content": "go on"}
		]}`), &wantBody)
	if diff := cmp.Diff(wantBody, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestClient_Turn_compatibleServers(t *testing.T) {
	tests := []struct {
		name string
		body string
		want agent.Response
	}{
		{"text only, length cut, no usage", chunks(
			`{"id":"x","choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
			`{"id":"x","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"length"}]}`) + done,
			agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: "Hello"}, Stop: agent.StopMaxTokens}},
		{"call with id but no index, then fragments without either", chunks(
			`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"id":"k1","function":{"name":"QueryBoard","arguments":"{\"a\":"}}]}}]}`,
			`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
			`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`) + done,
			agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "k1", Name: "QueryBoard", Arguments: json.RawMessage(`{"a":1}`)}}}, Stop: agent.StopToolUse}},
		{"call without id gets one from the chunk", chunks(
			`{"id":"x9","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"QueryBoard","arguments":""}}]}}]}`) + done,
			agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "call_x9_0", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}}, Stop: agent.StopToolUse}},
		{"second choice ignored, comments and CRLF", ": keep-alive\r\n\r\n" + strings.ReplaceAll(chunks(
			`{"id":"x","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`)+done, "\n", "\r\n"),
			agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: "mine"}, Stop: agent.StopEnd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := serve(t, reply{body: tt.body})
			resp, err := newClient(t, url, agent.Key{}).Turn(t.Context(), conversation, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.RequestID = "" // TestClient_Turn and TestClient_Turn_requestID check it
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("Turn response (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClient_Turn_requestID: the x-request-id header, when the server sends one, is the
// request id the record keeps, before the completion's id.
func TestClient_Turn_requestID(t *testing.T) {
	url, _ := serve(t, reply{headers: map[string]string{"x-request-id": "req_7f3a"}, body: toolStream})
	resp, err := newClient(t, url+"/v1", agent.NewKey("k")).Turn(t.Context(), conversation, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.RequestID != "req_7f3a" {
		t.Errorf("RequestID = %q, want the x-request-id header req_7f3a", resp.RequestID)
	}
}

func TestClient_Turn_noKeyNoHeader(t *testing.T) {
	url, got := serve(t, reply{body: chunks(`{"choices":[{"index":0,"delta":{"content":"hi"}}]}`) + done})
	if _, err := newClient(t, url, agent.Key{}).Turn(t.Context(), conversation, nil); err != nil {
		t.Fatal(err)
	}
	if a, ok := got.headers["Authorization"]; ok {
		t.Errorf("Authorization = %q sent without a key", a)
	}
}

func TestClient_Endpoint(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/chat/completions"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/chat/completions"},
		{"http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/chat/completions"},
		{"http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/chat/completions"},
		{"https://host/openai/v1", "https://host/openai/v1/chat/completions"},
		{"https://host/v1/chat/completions", "https://host/v1/chat/completions"},
		{"https://api.deepseek.com/chat/completions", "https://api.deepseek.com/chat/completions"},
		{"", "https://api.openai.com/v1/chat/completions"},
	}
	for _, tt := range tests {
		c, err := openai.New(openai.Config{URL: tt.url, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Endpoint(); got != tt.want {
			t.Errorf("New(URL %q).Endpoint() = %q, want %q", tt.url, got, tt.want)
		}
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
		{"unauthorized", reply{status: 401, body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}, agent.KindAuth, contract.CodeModelAuth, false, 0},
		{"rate limited", reply{status: 429, headers: map[string]string{"Retry-After": "20"}, body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`}, agent.KindRateLimit, contract.CodeModelRateLimited, true, 20 * time.Second},
		{"quota", reply{status: 429, body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`}, agent.KindQuota, contract.CodeModelQuota, false, 0},
		{"context length by code", reply{status: 400, body: `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`}, agent.KindContextLength, contract.CodeModelContextLength, false, 0},
		{"context length from llama.cpp", reply{status: 400, body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`}, agent.KindContextLength, contract.CodeModelContextLength, false, 0},
		{"bad request with string error", reply{status: 400, body: `{"error":"model not found"}`}, agent.KindBadRequest, contract.CodeModelBadRequest, false, 0},
		{"server error", reply{status: 500, headers: map[string]string{"Retry-After": "3"}, body: `{"error":{"message":"The server had an error","type":"server_error","code":null}}`}, agent.KindServer, contract.CodeModelServer, true, 3 * time.Second},
		{"plain text 503", reply{status: 503, body: "upstream unavailable"}, agent.KindServer, contract.CodeModelServer, true, 0},
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
	first := `{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"QueryBoard","arguments":"{\"x\""}}]}}]}`
	tests := []struct {
		name string
		body string
		kind agent.ErrorKind
	}{
		{"truncated JSON chunk", chunks(first, `{"id":"c","choices":[{"index":0,"delta":{"con`) + done, agent.KindStream},
		{"missing [DONE]", chunks(first, `{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}`), agent.KindStream},
		{"garbage line", chunks(first) + "garbage\n\n" + done, agent.KindStream},
		{"arguments never closed", chunks(first) + done, agent.KindStream},
		{"call without a name", chunks(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}}]}`) + done, agent.KindStream},
		{"call renamed mid-stream", chunks(first, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"OpenCase","arguments":"}"}}]}}]}`) + done, agent.KindStream},
		{"error chunk mid-stream", chunks(first, `{"error":{"message":"overloaded","type":"server_error"}}`), agent.KindServer},
		{"fragment with neither index nor id first", chunks(`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"QueryBoard","arguments":"{}"}}]}}]}`) + done, agent.KindStream},
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

// TestClient_Turn_thinking: the thinking setting sends DeepSeek's thinking field only when
// it is on or off; by default the request carries none, since other servers may refuse it.
// Reasoning streamed as reasoning_content is kept apart from the answer and sent back
// only on an assistant message with tool calls.
func TestClient_Turn_thinking(t *testing.T) {
	stream := chunks(
		`{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"First I "}}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"think."}}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":"stop"}]}`) + done
	for _, tt := range []struct {
		thinking agent.Thinking
		want     string
	}{{agent.ThinkingDefault, ""}, {agent.ThinkingOn, `{"type":"enabled"}`}, {agent.ThinkingOff, `{"type":"disabled"}`}} {
		url, got := serve(t, reply{body: stream})
		c, err := openai.New(openai.Config{URL: url, Model: "deepseek-reasoner", Thinking: tt.thinking})
		if err != nil {
			t.Fatal(err)
		}
		req := agent.Request{Messages: []agent.Message{
			{Role: agent.RoleUser, Text: "go"},
			{Role: agent.RoleAssistant, Text: "calling", Reasoning: []agent.Reasoning{{Text: "R-with-calls"}}, Calls: []agent.ToolCall{{ID: "k1", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "k1", Content: "{}"}}},
			{Role: agent.RoleAssistant, Text: "an answer", Reasoning: []agent.Reasoning{{Text: "R-final"}}},
			{Role: agent.RoleUser, Text: "again"},
		}}
		resp, err := c.Turn(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Text != "Done." || len(resp.Message.Reasoning) != 1 || resp.Message.Reasoning[0].Text != "First I think." {
			t.Errorf("thinking %q: message %+v, want the reasoning apart from the answer", tt.thinking, resp.Message)
		}
		var body struct {
			Thinking json.RawMessage `json:"thinking"`
			Messages []struct {
				ReasoningContent *string `json:"reasoning_content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(got.body, &body); err != nil {
			t.Fatal(err)
		}
		if string(body.Thinking) != tt.want {
			t.Errorf("thinking %q sent %s, want %q", tt.thinking, body.Thinking, tt.want)
		}
		if rc := body.Messages[1].ReasoningContent; rc == nil || *rc != "R-with-calls" || body.Messages[4].ReasoningContent != nil {
			t.Errorf("thinking %q: the reasoning sent back is wrong: %s", tt.thinking, got.body)
		}
	}
}
