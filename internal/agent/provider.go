package agent

import (
	"context"
	"encoding/json"
)

// Provider is one model endpoint that can take a turn in a conversation. Implementations
// live beneath provider/ (anthropic, openai, emulated, scripted); only cmd/docket names one.
//
// Turn sends the whole conversation in req and returns the assistant's message, its stop
// reason and the tokens the turn used. When onDelta is not nil, text and tool-argument
// fragments are passed to it in arrival order before Turn returns; it is called from the
// goroutine that called Turn. A Provider holds no conversation state between turns, so a
// resumed run only has to send the transcript again.
//
// Errors: an invalid req is a *contract.Error with [contract.CodeInvalidArgument]; a
// failure of the endpoint is a *[ProviderError] whose Kind says what failed and whose
// Retryable and RetryAfter say what to do next; ctx's error is returned wrapped when ctx
// ends. No error, log line or panic carries the key.
//
// Implementations are safe for concurrent use by several conversations.
type Provider interface {
	Turn(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)

	// Name describes the provider for people: logs, banners, transcripts.
	Name() string
}

// Role is who wrote a [Message].
type Role string

// Roles. The system prompt is not a message; it travels in [Request.System].
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Request is one turn's input: the system prompt, the conversation so far in order, and
// the tools the model may call.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolDef

	// MaxTokens caps the tokens of the answer; 0 means the provider's default.
	MaxTokens int
}

// Message is one message of a conversation. An assistant message holds Text and then
// Calls; a user message holds Results (answering every call of the assistant message just
// before it) and then Text. The order within each list is kept on the wire.
type Message struct {
	Role    Role         `json:"role"`
	Text    string       `json:"text,omitempty"`
	Calls   []ToolCall   `json:"calls,omitempty"`
	Results []ToolResult `json:"results,omitempty"`
	// Turn is, on an assistant message, the model turn that wrote it, and so proposed its
	// Calls; it is saved with the conversation into the authority's log.
	Turn *Turn `json:"turn,omitempty"`
	// Reasoning is, on an assistant message, the model's thinking before it, in order:
	// kept and sent back to the provider, never shown as the answer ([Reasoning]).
	Reasoning []Reasoning `json:"reasoning,omitempty"`
}

// Turn is what the record keeps of one model turn: which provider and model answered,
// why it stopped, what it used and how long it took, and a digest of what was sent —
// never the content.
type Turn struct {
	Model     string     `json:"model"`               // the provider's Name: provider and model
	RequestID string     `json:"requestId,omitempty"` // the provider's id of the request, when it gave one
	Stop      StopReason `json:"stop"`
	Usage     Usage      `json:"usage"`
	LatencyMS int64      `json:"latencyMs"`
	Sent      string     `json:"sent"` // "sha256:<hex>" of the request as JSON
	// Retries are the attempts of this turn's request that failed and were sent again
	// before this answer came ([WithRetries]): provider, what failed, the wait.
	Retries []Retry `json:"retries,omitempty"`
}

// ToolDef is a tool the model may call: its name, what it is for, and the JSON Schema of
// its arguments.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolCall is the model asking for one tool call. ID is the provider's id of the call,
// echoed by the [ToolResult] that answers it; Arguments is a JSON object.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult answers the [ToolCall] with the same ID. Content is what the model is shown,
// already bounded by [Bounder]; IsError marks a refusal or failure.
type ToolResult struct {
	CallID  string `json:"callId"`
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
	// Ordinal is the ordinal of the Operation the call became, 0 when it became none: with
	// the conversation's Agent it links the Operation to the turn that proposed the call.
	Ordinal int64 `json:"ordinal,omitempty"`
}

// StopReason says why the model ended its turn.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEnd       StopReason = "end"        // the model finished its answer
	StopToolUse   StopReason = "tool_use"   // the model wants its tool calls answered
	StopMaxTokens StopReason = "max_tokens" // the answer was cut at [Request.MaxTokens]
)

// Usage is the tokens one turn used, as the endpoint reported them.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Response is the result of one turn.
type Response struct {
	Message Message // Role is always RoleAssistant
	Stop    StopReason
	Usage   Usage
	// RequestID is the provider's id of the request ("" when it gave none): a response
	// header, else the id in the streamed body.
	RequestID string
	// Retries are the attempts that failed and were sent again before this answer came;
	// set by [WithRetries].
	Retries []Retry
}

// DeltaKind says what a [Delta] carries.
type DeltaKind string

// Delta kinds.
const (
	DeltaText     DeltaKind = "text"      // a fragment of the assistant's text
	DeltaToolCall DeltaKind = "tool_call" // a tool call began: Index, ID and Name are set
	DeltaToolArgs DeltaKind = "tool_args" // a fragment of a tool call's JSON arguments
	// DeltaDiscard: the attempt streamed so far failed and is dropped, its deltas with
	// it; the request is sent again ([WithRetries]). Text says why.
	DeltaDiscard DeltaKind = "discard"
)

// Delta is a streamed fragment of the answer, for showing progress. The final
// [Response] is authoritative; deltas are never needed to rebuild it.
type Delta struct {
	Kind  DeltaKind
	Index int    // the tool call's position in Response.Message.Calls
	ID    string // DeltaToolCall only
	Name  string // DeltaToolCall only
	Text  string // DeltaText and DeltaToolArgs
}
