// Package anthropic provides an agent.Provider over the Anthropic Messages API, with native
// tool use and a streamed answer; it is a thin client of its own over net/http.
package anthropic

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

// Defaults of [Config].
const (
	DefaultVersion   = "2023-06-01" // anthropic-version header
	DefaultMaxTokens = 8192         // answer tokens when neither Config nor Request sets them
)

// maxErrorBody bounds how much of an error response is read, in bytes.
const maxErrorBody = 64 << 10

// Config configures a [Client].
type Config struct {
	URL       string       // server root; default agent.DefaultAnthropicURL
	Model     string       // model name, required
	Key       agent.Key    // API key, required; sent only in the x-api-key header
	Version   string       // anthropic-version header; default DefaultVersion
	MaxTokens int          // answer tokens when the Request sets none; default DefaultMaxTokens
	HTTP      *http.Client // default: a client with no overall timeout, since ctx and Deadlines bound each turn
	Now       func() time.Time
	// Deadlines bound each request's wait for its answer's first byte and between its
	// reads; zero fields take the defaults of [agent.Deadlines].
	Deadlines agent.Deadlines
	// Thinking on enables extended thinking with half the answer's tokens as its budget
	// (at least MinThinkingBudget); off disables it; the default sends no parameter.
	Thinking agent.Thinking
}

// MinThinkingBudget is the smallest thinking budget the Messages API takes, in tokens.
const MinThinkingBudget = 1024

// Client is an [agent.Provider] for one model on a Messages API endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg      Config
	endpoint string
}

var _ agent.Provider = (*Client)(nil)

// New returns a Client for cfg, or a *contract.Error naming what is missing.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		cfg.URL = agent.DefaultAnthropicURL
	}
	if cfg.Model == "" {
		return nil, contract.Errorf(contract.CodeModelConfig, "the anthropic provider needs a model name; pass --model, e.g. claude-sonnet-4-20250514")
	}
	if cfg.Key.IsZero() {
		return nil, contract.Errorf(contract.CodeModelConfig, "the anthropic provider needs an API key; put it in a key file (--model-key-file) or %s", agent.KeyEnv)
	}
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg, endpoint: agent.Endpoint(cfg.URL, "messages")}, nil
}

// Name is "anthropic <model>".
func (c *Client) Name() string { return "anthropic " + c.cfg.Model }

// Turn sends req to the Messages API with stream enabled and gathers the streamed answer.
func (c *Client) Turn(ctx context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Response, error) {
	if err := req.Validate(); err != nil {
		return agent.Response{}, err
	}
	body, err := json.Marshal(c.wireRequest(req))
	if err != nil {
		return agent.Response{}, fmt.Errorf("encode anthropic request: %w", err)
	}
	x := agent.Exchange{Provider: "anthropic", URL: c.endpoint, Body: body, Key: c.cfg.Key, HTTP: c.cfg.HTTP, RequestIDHeader: "Request-Id", Deadlines: c.cfg.Deadlines,
		Header: http.Header{"Anthropic-Version": {c.cfg.Version}, "X-Api-Key": {c.cfg.Key.Reveal()}}}
	return x.Stream(ctx, c.httpError, func(r io.Reader) (agent.Response, error) { return readStream(r, onDelta) })
}

// httpError turns a non-2xx answer into a *agent.ProviderError, refined by the body's
// error type when there is one.
func (c *Client) httpError(resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		// The status still says what failed; say that the body meant to explain it was cut.
		raw = fmt.Appendf(raw, " (the rest of the error body could not be read: %v)", err)
	}
	var body struct {
		Error wireError `json:"error"`
	}
	msg := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
		msg = body.Error.Message
	}
	e := &agent.ProviderError{
		Provider: "anthropic",
		Kind:     agent.KindOfStatus(resp.StatusCode),
		Status:   resp.StatusCode,
		Message:  c.cfg.Key.Scrub(clip(msg)),
	}
	if k := kindOf(body.Error.Type, msg); k != "" {
		e.Kind = k
	}
	if e.Kind == agent.KindRateLimit || e.Kind == agent.KindServer {
		e.After = agent.ParseRetryAfter(resp.Header.Get("retry-after"), c.cfg.Now())
	}
	return e
}

// kindOf maps an Anthropic error type (and, for invalid requests, its message) to a kind;
// "" when the type adds nothing to the HTTP status.
func kindOf(typ, msg string) agent.ErrorKind {
	switch typ {
	case "authentication_error", "permission_error":
		return agent.KindAuth
	case "rate_limit_error":
		return agent.KindRateLimit
	case "overloaded_error", "api_error":
		return agent.KindServer
	case "request_too_large":
		return agent.KindContextLength
	case "invalid_request_error":
		if isContextLength(msg) {
			return agent.KindContextLength
		}
		return agent.KindBadRequest
	}
	return ""
}

func isContextLength(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"prompt is too long", "context limit", "context window", "context length"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func (c *Client) wireRequest(req agent.Request) wireRequest {
	w := wireRequest{Model: c.cfg.Model, MaxTokens: c.cfg.MaxTokens, System: req.System, Stream: true}
	if req.MaxTokens > 0 {
		w.MaxTokens = req.MaxTokens
	}
	switch c.cfg.Thinking {
	case agent.ThinkingOn:
		budget := max(MinThinkingBudget, w.MaxTokens/2)
		if w.MaxTokens <= budget {
			w.MaxTokens = budget + MinThinkingBudget // the budget is part of max_tokens and must be below it
		}
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
	case agent.ThinkingOff:
		w.Thinking = &wireThinking{Type: "disabled"}
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	for _, m := range req.Messages {
		wm := wireMessage{Role: string(m.Role)}
		// Thinking blocks lead the assistant message they came with, signed as they came:
		// the API requires them back with the tool results they led to. Reasoning from
		// another provider carries no signature and is not sent.
		for _, r := range m.Reasoning {
			switch {
			case r.Redacted != "":
				wm.Content = append(wm.Content, wireBlock{Type: "redacted_thinking", Data: r.Redacted})
			case r.Signature != "":
				wm.Content = append(wm.Content, wireBlock{Type: "thinking", Thinking: &r.Text, Signature: r.Signature})
			}
		}
		// tool_result blocks lead a user message, as the API requires.
		for _, r := range m.Results {
			wm.Content = append(wm.Content, wireBlock{Type: "tool_result", ToolUseID: r.CallID, Content: r.Content, IsError: r.IsError})
		}
		if m.Text != "" {
			wm.Content = append(wm.Content, wireBlock{Type: "text", Text: m.Text})
		}
		for _, call := range m.Calls {
			wm.Content = append(wm.Content, wireBlock{Type: "tool_use", ID: call.ID, Name: call.Name, Input: call.Arguments})
		}
		w.Messages = append(w.Messages, wm)
	}
	return w
}

// clip bounds an endpoint's message before it goes into an error.
func clip(s string) string {
	const n = 500
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
