// Package emulated provides an agent.Provider that gives tool use to a model endpoint that
// has none: the tools are described in the system prompt, and the model answers each turn
// with one JSON object naming a tool call or a final answer.
package emulated

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// DefaultMaxRepairs is how many times a malformed reply is fed back to the model, with
// the teaching sentence, before the turn fails.
const DefaultMaxRepairs = 2

// Config configures a [Provider].
type Config struct {
	// Inner is the endpoint, called with no tools: usually an openai.Client on a server
	// without tool support. Required.
	Inner agent.Provider
	// MaxRepairs is how often a malformed reply is fed back per turn; 0: DefaultMaxRepairs,
	// negative: never.
	MaxRepairs int
}

// Provider emulates tool use over [Config.Inner]. It is safe for concurrent use when
// Inner is.
type Provider struct {
	inner   agent.Provider
	repairs int
}

var _ agent.Provider = (*Provider)(nil)

// New returns a Provider over cfg.Inner.
func New(cfg Config) (*Provider, error) {
	if cfg.Inner == nil {
		return nil, contract.Errorf(contract.CodeModelConfig, "the emulated provider needs an endpoint to talk to; pass --model-url")
	}
	repairs := cfg.MaxRepairs
	switch {
	case repairs == 0:
		repairs = DefaultMaxRepairs
	case repairs < 0:
		repairs = 0
	}
	return &Provider{inner: cfg.Inner, repairs: repairs}, nil
}

// Name says that tool use is emulated, and over what.
func (p *Provider) Name() string { return "emulated tool use over " + p.inner.Name() }

// Turn asks the inner endpoint for one JSON reply and turns it into a tool call or a final
// answer. A reply that is not exactly one such object is fed back to the model with the
// teaching sentence of its refusal, up to MaxRepairs times; the usage of every attempt is
// counted. When the model still does not comply, Turn fails with a KindReply
// *agent.ProviderError carrying the last teaching sentence.
func (p *Provider) Turn(ctx context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Response, error) {
	if err := req.Validate(); err != nil {
		return agent.Response{}, err
	}
	inner := agent.Request{
		System:    strings.TrimSpace(req.System + "\n\n" + Instructions(req.Tools)),
		Messages:  transcript(req.Messages),
		MaxTokens: req.MaxTokens,
	}
	var usage agent.Usage
	for attempt := 0; ; attempt++ {
		resp, err := p.inner.Turn(ctx, inner, nil)
		usage.InputTokens += resp.Usage.InputTokens
		usage.OutputTokens += resp.Usage.OutputTokens
		if err != nil {
			return agent.Response{}, fmt.Errorf("emulated turn: %w", err)
		}
		text := resp.Message.Text
		reply, err := ParseReply(text, req.Tools)
		if err == nil {
			return respond(reply, len(req.Messages), usage, onDelta), nil
		}
		teaching := err.Error()
		if ce, ok := err.(*contract.Error); ok {
			teaching = ce.Teaching
		}
		if attempt >= p.repairs {
			return agent.Response{}, &agent.ProviderError{Provider: "emulated", Kind: agent.KindReply,
				Message: fmt.Sprintf("the model's reply was refused %d times; last: %s", attempt+1, teaching), Usage: usage}
		}
		if strings.TrimSpace(text) == "" {
			text = "(empty reply)"
		}
		inner.Messages = append(inner.Messages,
			agent.Message{Role: agent.RoleAssistant, Text: text},
			agent.Message{Role: agent.RoleUser, Text: "Your reply was refused: " + teaching + "\nAnswer again with exactly one JSON object and nothing else."},
		)
	}
}

// respond builds the Response for a parsed reply and reports it as deltas. The call id
// is derived from the conversation's length, which grows every turn, so it is unique in
// the conversation and the same when a turn is replayed.
func respond(r Reply, n int, usage agent.Usage, onDelta func(agent.Delta)) agent.Response {
	if onDelta == nil {
		onDelta = func(agent.Delta) {}
	}
	if r.Tool == "" {
		onDelta(agent.Delta{Kind: agent.DeltaText, Text: r.Final})
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: r.Final}, Stop: agent.StopEnd, Usage: usage}
	}
	call := agent.ToolCall{ID: fmt.Sprintf("emulated_%d", n), Name: r.Tool, Arguments: r.Arguments}
	onDelta(agent.Delta{Kind: agent.DeltaToolCall, ID: call.ID, Name: call.Name})
	onDelta(agent.Delta{Kind: agent.DeltaToolArgs, Text: string(call.Arguments)})
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Calls: []agent.ToolCall{call}}, Stop: agent.StopToolUse, Usage: usage}
}

// transcript rewrites a conversation with tool calls and results as plain text, in the
// same reply format the model is asked to use, so that its own history teaches it.
func transcript(msgs []agent.Message) []agent.Message {
	out := make([]agent.Message, 0, len(msgs))
	names := map[string]string{}
	for _, m := range msgs {
		var parts []string
		switch m.Role {
		case agent.RoleAssistant:
			if m.Text != "" {
				parts = append(parts, m.Text)
			}
			for _, c := range m.Calls {
				names[c.ID] = c.Name
				b, err := json.Marshal(struct {
					Tool      string          `json:"tool"`
					Arguments json.RawMessage `json:"arguments"`
				}{c.Name, c.Arguments})
				if err != nil {
					// Arguments that are not JSON: the model sees what it sent, quoted.
					b = fmt.Appendf(nil, `{"tool":%q,"arguments":%q}`, c.Name, c.Arguments)
				}
				parts = append(parts, string(b))
			}
		case agent.RoleUser:
			for _, r := range m.Results {
				head := "Result of " + names[r.CallID] + ":"
				if r.IsError {
					head = "Error from " + names[r.CallID] + ":"
				}
				parts = append(parts, head+"\n"+r.Content)
			}
			if m.Text != "" {
				parts = append(parts, m.Text)
			}
		}
		out = append(out, agent.Message{Role: m.Role, Text: strings.Join(parts, "\n\n")})
	}
	return out
}

// Instructions is the part of the system prompt that describes the tools and the reply
// format. With no tools it asks for final answers only.
func Instructions(tools []agent.ToolDef) string {
	var b strings.Builder
	b.WriteString("Reply format: every reply is exactly one JSON object and nothing else: no prose, no code fence.\n")
	if len(tools) == 0 {
		b.WriteString(`No tools are available. Reply with {"final": "your answer"}.` + "\n")
		return b.String()
	}
	b.WriteString(`To call a tool: {"tool": "NAME", "arguments": {...}} with arguments matching the tool's schema. One call per reply; its result comes back in the next message.` + "\n")
	b.WriteString(`When you are done: {"final": "your answer"}.` + "\n\nTools:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "- %s: %s\n  arguments schema: %s\n", t.Name, t.Description, compact(t.InputSchema))
	}
	return b.String()
}

func compact(raw json.RawMessage) string {
	var b strings.Builder
	w := json.NewEncoder(&b)
	var v any
	if json.Unmarshal(raw, &v) != nil || w.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}
