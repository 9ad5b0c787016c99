package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
)

// The Messages request, as this server reads it, strictly; written apart from the
// client's wire types, as the Chat Completions shapes are.
type messagesRequest struct {
	Model     string            `json:"model"`
	MaxTokens int               `json:"max_tokens"`
	System    string            `json:"system"`
	Messages  []messagesMessage `json:"messages"`
	Tools     []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Stream   bool `json:"stream"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

type messagesMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   string          `json:"content"`
		IsError   bool            `json:"is_error"`
	} `json:"content"`
}

// NewAnthropic starts a Messages-compatible server at URL + "/v1/messages" that plays
// script. Every request must carry anthropic-version, and key, when not empty, in
// x-api-key; a request without it is answered 401 as Anthropic does. opts add faults
// and requirements.
func NewAnthropic(t cleaner, script *scripted.Script, key string, opts ...Option) *Server {
	return newServer(t, script, key, func(s *Server) http.HandlerFunc { return s.messages }, opts)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeError(w, http.StatusNotFound, "not_found_error", "this server answers POST /v1/messages")
		return
	}
	var in messagesRequest
	body, err := readBody(r)
	if err == nil {
		err = decode(body, &in)
	}
	req := agent.Request{}
	if err == nil {
		req, err = s.messagesConversation(in)
	}
	seen := Seen{Path: r.URL.Path, Model: in.Model, System: in.System, KeyOK: s.keyOK(r.Header.Get("X-Api-Key")), Stream: in.Stream,
		Version: r.Header.Get("Anthropic-Version")}
	at := s.record(seen)
	switch {
	case !seen.KeyOK:
		writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	case seen.Version == "":
		writeError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	case !in.Stream || in.MaxTokens <= 0:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "this server streams only; send stream: true and max_tokens")
		return
	}
	f := s.draw(body)
	switch f {
	case faultRateLimit:
		w.Header().Set("Retry-After", s.retryAfter())
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
		return
	case faultOverloaded:
		writeError(w, 529, "overloaded_error", "Overloaded")
		return
	case faultStall:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if sse(w, "ping", map[string]any{"type": "ping"}) == nil {
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
	events := []struct {
		name string
		data any
	}{{"message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_test", "type": "message", "role": "assistant",
		"usage": map[string]any{"input_tokens": promptTokens(r), "output_tokens": 1}}}}}
	add := func(name string, data map[string]any) {
		data["type"] = name
		events = append(events, struct {
			name string
			data any
		}{name, data})
	}
	idx := 0
	var ids []string
	for _, c := range resp.Message.Calls {
		ids = append(ids, c.ID)
	}
	if s.opts.reasoning {
		rs := reasoningFor(countAssistant(req.Messages)+1, ids)
		s.remember(ids, rs)
		add("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
		for _, p := range halves(rs.Text) {
			add("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": p}})
		}
		add("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "signature_delta", "signature": rs.Signature}})
		add("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	if resp.Message.Text != "" {
		add("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		add("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": resp.Message.Text}})
		add("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for _, c := range resp.Message.Calls {
		add("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range halves(string(c.Arguments)) {
			add("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		add("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	stop := "end_turn"
	if len(resp.Message.Calls) > 0 {
		stop = "tool_use"
	}
	add("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 10}})
	add("message_stop", map[string]any{})
	if f == faultCut {
		events = events[:max(len(events)/2, 1)]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		if err := sse(w, e.name, e.data); err != nil {
			return
		}
	}
	if f != faultCut {
		s.answered(at, agent.Usage{InputTokens: int64(promptTokens(r)), OutputTokens: 10})
	}
}

// messagesConversation reads the wire conversation, and checks that each assistant
// message with tool_use blocks carries back its thinking block, signature and all, when
// the server requires it.
func (s *Server) messagesConversation(in messagesRequest) (agent.Request, error) {
	for i, m := range in.Messages {
		var ids []string
		var rs Reasoning
		for _, b := range m.Content {
			switch b.Type {
			case "tool_use":
				ids = append(ids, b.ID)
			case "thinking":
				rs = Reasoning{Text: b.Thinking, Signature: b.Signature}
			}
		}
		if m.Role != "assistant" {
			continue
		}
		if err := s.checkReasoning(i, ids, rs); err != nil {
			return agent.Request{}, err
		}
	}
	return in.request()
}

// request turns the wire conversation into the runtime's.
func (in messagesRequest) request() (agent.Request, error) {
	req := agent.Request{System: in.System, MaxTokens: in.MaxTokens}
	for _, m := range in.Messages {
		msg := agent.Message{Role: agent.Role(m.Role)}
		if m.Role != "user" && m.Role != "assistant" {
			return req, errorf("message role %q is not user or assistant", m.Role)
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				msg.Text += b.Text
			case "tool_use":
				msg.Calls = append(msg.Calls, agent.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
			case "tool_result":
				msg.Results = append(msg.Results, agent.ToolResult{CallID: b.ToolUseID, Content: b.Content, IsError: b.IsError})
			case "thinking", "redacted_thinking":
				if m.Role != "assistant" {
					return req, errorf("a %s block is in a %s message; only the assistant thinks", b.Type, m.Role)
				}
			default:
				return req, errorf("content block type %q is not text, thinking, tool_use or tool_result", b.Type)
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, agent.ToolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return req, req.Validate()
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
