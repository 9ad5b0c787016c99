package providertest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
)

// The Chat Completions request, as this server reads it: what a client sends, read
// strictly on the server's side. These shapes are written apart from the client's wire
// types on purpose, so that a mistake in those is not shared by the server that tests
// them.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Tools         []chatTool    `json:"tools"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens int `json:"max_tokens"`
	// Thinking is DeepSeek's switch of its thinking mode.
	Thinking *struct {
		Type string `json:"type"`
	} `json:"thinking"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
	// ReasoningContent is a reasoning model's reasoning, sent back on an assistant message
	// (DeepSeek).
	ReasoningContent *string `json:"reasoning_content"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// NewOpenAI starts a Chat Completions-compatible server at URL + "/v1/chat/completions"
// (and at URL + "/chat/completions", DeepSeek's path) that plays script. key, when not
// empty, must come as "Authorization: Bearer <key>"; a request without it is answered
// 401 as OpenAI does. opts add faults and requirements.
func NewOpenAI(t cleaner, script *scripted.Script, key string, opts ...Option) *Server {
	return newServer(t, script, key, func(s *Server) http.HandlerFunc { return s.chat }, opts)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/chat/completions") {
		writeError(w, http.StatusNotFound, "invalid_request_error", "this server answers POST /v1/chat/completions and /chat/completions")
		return
	}
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var in chatRequest
	body, err := readBody(r)
	if err == nil {
		err = decode(body, &in)
	}
	req := agent.Request{}
	if err == nil {
		req, err = s.chatConversation(in)
	}
	seen := Seen{Path: r.URL.Path, Model: in.Model, System: req.System, KeyOK: s.keyOK(bearer), Stream: in.Stream}
	at := s.record(seen)
	switch {
	case !seen.KeyOK:
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided.")
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	case !in.Stream:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "this server streams only; send stream: true")
		return
	}
	f := s.draw(body)
	switch f {
	case faultRateLimit:
		w.Header().Set("Retry-After", s.retryAfter())
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached for requests; please try again later.")
		return
	case faultOverloaded:
		writeError(w, http.StatusServiceUnavailable, "server_error", "The server is overloaded; please try again later.")
		return
	case faultStall:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if sse(w, "", map[string]any{"id": "chatcmpl-test", "choices": []map[string]any{{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}}}}) == nil {
			s.stall(r)
		}
		return
	case faultCut:
		defer cut() // after the first half of the answer
	}
	resp, err := s.turn(r.Context(), req)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	var chunks []map[string]any
	chunk := func(delta map[string]any, finish *string) {
		chunks = append(chunks, map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk",
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	var ids []string
	for _, c := range resp.Message.Calls {
		ids = append(ids, c.ID)
	}
	if s.opts.reasoning {
		rs := reasoningFor(countAssistant(req.Messages)+1, ids)
		s.remember(ids, Reasoning{Text: rs.Text})
		for _, p := range halves(rs.Text) {
			chunk(map[string]any{"role": "assistant", "content": nil, "reasoning_content": p}, nil)
		}
	}
	chunk(map[string]any{"role": "assistant", "content": resp.Message.Text}, nil)
	for i, c := range resp.Message.Calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, p := range halves(string(c.Arguments)) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	finish := "stop"
	if len(resp.Message.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, &finish)
	var reported agent.Usage
	if in.StreamOptions != nil && in.StreamOptions.IncludeUsage {
		prompt := promptTokens(r)
		reported = agent.Usage{InputTokens: int64(prompt), OutputTokens: 10}
		usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": 10, "total_tokens": prompt + 10}
		chunks = append(chunks, map[string]any{"id": "chatcmpl-test", "choices": []any{}, "usage": usage})
	}
	if f == faultCut {
		chunks = chunks[:max(len(chunks)/2, 1)]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, c := range chunks {
		if err := sse(w, "", c); err != nil {
			return
		}
	}
	if f == faultCut {
		return // the deferred cut drops the connection
	}
	if _, err := w.Write([]byte("data: [DONE]\n\n")); err == nil {
		s.answered(at, reported)
	}
}

// chatConversation reads the wire conversation, and checks that each assistant message
// with tool calls carries back its reasoning when the server requires it.
func (s *Server) chatConversation(in chatRequest) (agent.Request, error) {
	for i, m := range in.Messages {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		var ids []string
		for _, c := range m.ToolCalls {
			ids = append(ids, c.ID)
		}
		var rs Reasoning
		if m.ReasoningContent != nil {
			rs.Text = *m.ReasoningContent
		}
		if err := s.checkReasoning(i, ids, rs); err != nil {
			return agent.Request{}, err
		}
	}
	return in.request()
}

// request turns the wire conversation into the runtime's: system messages into the
// system prompt, tool messages into the results of the user message after the calls.
func (in chatRequest) request() (agent.Request, error) {
	var req agent.Request
	var system []string
	user := func() *agent.Message {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == agent.RoleUser {
			return &req.Messages[n-1]
		}
		req.Messages = append(req.Messages, agent.Message{Role: agent.RoleUser})
		return &req.Messages[len(req.Messages)-1]
	}
	for _, m := range in.Messages {
		text := ""
		if m.Content != nil {
			text = *m.Content
		}
		switch m.Role {
		case "system":
			system = append(system, text)
		case "user":
			u := user()
			u.Text = strings.TrimSpace(u.Text + "\n" + text)
		case "tool":
			u := user()
			u.Results = append(u.Results, agent.ToolResult{CallID: m.ToolCallID, Content: text})
		case "assistant":
			a := agent.Message{Role: agent.RoleAssistant, Text: text}
			for _, c := range m.ToolCalls {
				a.Calls = append(a.Calls, agent.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: json.RawMessage(c.Function.Arguments)})
			}
			req.Messages = append(req.Messages, a)
		default:
			return req, errorf("message role %q is not one of system, user, assistant, tool", m.Role)
		}
	}
	req.System = strings.Join(system, "\n")
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, agent.ToolDef{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	return req, req.Validate()
}
