package openai

import (
	"encoding/json"
	"strconv"
)

// The Chat Completions request shape, as far as Docket uses it.
type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	// Thinking is DeepSeek's switch of its thinking mode, sent only when the profile says
	// on or off: other servers may refuse a field they do not know.
	Thinking *wireThinking `json:"thinking,omitempty"`
}

type wireThinking struct {
	Type string `json:"type"` // enabled or disabled
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"` // null on an assistant message with only tool calls
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	// ReasoningContent is a reasoning model's reasoning (DeepSeek), sent back on an
	// assistant message with tool calls, as that provider requires.
	ReasoningContent *string `json:"reasoning_content,omitempty"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"` // stream deltas only
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// wireError is an error object. Code is a string at OpenAI and a number at some
// compatible servers, so it is kept raw.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (w wireError) code() string {
	var s string
	if json.Unmarshal(w.Code, &s) == nil {
		return s
	}
	var n int
	if json.Unmarshal(w.Code, &n) == nil {
		return strconv.Itoa(n)
	}
	return ""
}

// wireChunk is one streamed chunk.
type wireChunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string        `json:"content"`
			ReasoningContent *string        `json:"reasoning_content"`
			ToolCalls        []wireToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error *wireError `json:"error"`
}
