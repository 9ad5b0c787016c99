// Package openai provides an agent.Provider over OpenAI Chat Completions and the servers
// that speak it (llama.cpp, vLLM, Ollama and others), with native tool use and a streamed
// answer; it is a thin client of its own over net/http.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// maxErrorBody bounds how much of an error response is read, in bytes.
const maxErrorBody = 64 << 10

// Config configures a [Client].
type Config struct {
	// URL is the server root: "http://host:port", ".../v1" and ".../v1/chat/completions"
	// all reach ".../v1/chat/completions". Default agent.DefaultOpenAIURL.
	URL       string
	Model     string       // model name, required
	Key       agent.Key    // bearer key; optional, since local servers often need none
	MaxTokens int          // answer tokens when the Request sets none; 0: the server's default
	HTTP      *http.Client // default: a client with no overall timeout, since ctx and Deadlines bound each turn
	Now       func() time.Time
	// Deadlines bound each request's wait for its answer's first byte and between its
	// reads; zero fields take the defaults of [agent.Deadlines].
	Deadlines agent.Deadlines
	// Thinking on or off sends DeepSeek's thinking field; the default sends none.
	Thinking agent.Thinking
}

// Client is an [agent.Provider] for one model on a Chat Completions endpoint. It is safe
// for concurrent use.
type Client struct {
	cfg      Config
	endpoint string
}

var _ agent.Provider = (*Client)(nil)

// New returns a Client for cfg, or a *contract.Error naming what is missing.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		cfg.URL = agent.DefaultOpenAIURL
	}
	if cfg.Model == "" {
		return nil, contract.Errorf(contract.CodeModelConfig, "the openai provider needs a model name; pass --model")
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg, endpoint: agent.Endpoint(cfg.URL, "chat/completions")}, nil
}

// Endpoint is the URL the client posts to.
func (c *Client) Endpoint() string { return c.endpoint }

// Name is "openai-compatible <model> at <endpoint>".
func (c *Client) Name() string { return "openai-compatible " + c.cfg.Model + " at " + c.endpoint }

// Turn sends req to the Chat Completions endpoint with stream enabled and gathers the
// streamed answer. A Request without tools sends no tools field, which is what the
// emulated provider relies on for servers that have no tool support.
func (c *Client) Turn(ctx context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Response, error) {
	if err := req.Validate(); err != nil {
		return agent.Response{}, err
	}
	body, err := json.Marshal(c.wireRequest(req))
	if err != nil {
		return agent.Response{}, fmt.Errorf("encode openai request: %w", err)
	}
	x := agent.Exchange{Provider: "openai", URL: c.endpoint, Body: body, Key: c.cfg.Key, HTTP: c.cfg.HTTP, Header: http.Header{},
		RequestIDHeader: "X-Request-Id", Deadlines: c.cfg.Deadlines}
	if !c.cfg.Key.IsZero() {
		x.Header.Set("Authorization", "Bearer "+c.cfg.Key.Reveal())
	}
	return x.Stream(ctx, c.httpError, func(r io.Reader) (agent.Response, error) { return readStream(r, onDelta) })
}

// httpError turns a non-2xx answer into a *agent.ProviderError.
func (c *Client) httpError(resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		// The status still says what failed; say that the body meant to explain it was cut.
		raw = fmt.Appendf(raw, " (the rest of the error body could not be read: %v)", err)
	}
	w := parseError(raw)
	e := errorOf(w, resp.StatusCode)
	e.Message = c.cfg.Key.Scrub(e.Message)
	if e.Kind == agent.KindRateLimit || e.Kind == agent.KindServer {
		e.After = agent.ParseRetryAfter(resp.Header.Get("Retry-After"), c.cfg.Now())
	}
	return e
}

// parseError reads the error shapes servers send: {"error": {...}}, {"error": "text"},
// or anything else, which is kept as text.
func parseError(raw []byte) wireError {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var w wireError
		if json.Unmarshal(body.Error, &w) == nil && w.Message != "" {
			return w
		}
		var s string
		if json.Unmarshal(body.Error, &s) == nil {
			return wireError{Message: s}
		}
	}
	return wireError{Message: strings.TrimSpace(string(raw))}
}

// errorOf classifies an error body; status is 0 for an error sent inside the stream.
func errorOf(w wireError, status int) *agent.ProviderError {
	e := &agent.ProviderError{Provider: "openai", Kind: agent.KindServer, Status: status, Message: clip(w.Message)}
	if status != 0 {
		e.Kind = agent.KindOfStatus(status)
	}
	code := w.code()
	switch {
	case code == "context_length_exceeded" || isContextLength(w.Message):
		e.Kind = agent.KindContextLength
	case code == "insufficient_quota":
		e.Kind = agent.KindQuota
	case code == "invalid_api_key":
		e.Kind = agent.KindAuth
	case code == "rate_limit_exceeded" || w.Type == "rate_limit_error":
		e.Kind = agent.KindRateLimit
	}
	return e
}

func isContextLength(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"maximum context length", "context length", "context window", "context size", "too many tokens"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func (c *Client) wireRequest(req agent.Request) wireRequest {
	w := wireRequest{Model: c.cfg.Model, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true}, MaxTokens: c.cfg.MaxTokens}
	switch c.cfg.Thinking {
	case agent.ThinkingOn:
		w.Thinking = &wireThinking{Type: "enabled"}
	case agent.ThinkingOff:
		w.Thinking = &wireThinking{Type: "disabled"}
	}
	if req.MaxTokens > 0 {
		w.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: &req.System})
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case agent.RoleAssistant:
			wm := wireMessage{Role: "assistant"}
			if m.Text != "" {
				wm.Content = &m.Text
			}
			for _, call := range m.Calls {
				wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: call.ID, Type: "function", Function: wireFunction{Name: call.Name, Arguments: string(call.Arguments)}})
			}
			if rc := reasoningText(m); rc != "" && len(m.Calls) > 0 {
				// A reasoning model that called tools needs its reasoning back with the
				// results (DeepSeek refuses the request without it); a final answer's
				// reasoning is not sent again.
				wm.ReasoningContent = &rc
			}
			w.Messages = append(w.Messages, wm)
		case agent.RoleUser:
			// Tool results are messages of their own, right after the assistant's calls.
			for _, r := range m.Results {
				w.Messages = append(w.Messages, wireMessage{Role: "tool", ToolCallID: r.CallID, Content: &r.Content})
			}
			if m.Text != "" {
				w.Messages = append(w.Messages, wireMessage{Role: "user", Content: &m.Text})
			}
		}
	}
	return w
}

// reasoningText is the text of m's reasoning, its blocks joined.
func reasoningText(m agent.Message) string {
	var b strings.Builder
	for _, r := range m.Reasoning {
		b.WriteString(r.Text)
	}
	return b.String()
}

// clip bounds an endpoint's message before it goes into an error.
func clip(s string) string {
	const n = 500
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
