package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/sse"
)

// call is one tool call being streamed; its arguments arrive in fragments, keyed by index.
type call struct {
	pos  int // order of first appearance, for deltas
	id   string
	name string
	args strings.Builder
}

// readStream gathers a Chat Completions chunk stream into a Response. The stream must end
// with "data: [DONE]"; one that stops before it, sends a line that is not SSE, or sends a
// chunk that is not JSON is a KindStream error, since a cut answer must not pass as whole.
func readStream(r io.Reader, onDelta func(agent.Delta)) (agent.Response, error) {
	if onDelta == nil {
		onDelta = func(agent.Delta) {}
	}
	var (
		rd     = sse.NewReader(r)
		text   strings.Builder
		reason strings.Builder // reasoning_content: kept, never the answer
		calls  = map[int]*call{}
		last   = -1 // index of the call that fragments without an index belong to
		usage  agent.Usage
		finish string
		id     string // the completion's id, the request id when no header names one
	)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return agent.Response{}, cutError("the stream ended without [DONE]", io.ErrUnexpectedEOF)
		}
		if err != nil {
			return agent.Response{}, readError(err)
		}
		if ev.Data == "[DONE]" {
			break
		}
		if ev.Name == "error" && !strings.HasPrefix(strings.TrimSpace(ev.Data), "{") {
			return agent.Response{}, errorOf(wireError{Message: ev.Data}, 0)
		}
		var ch wireChunk
		if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
			return agent.Response{}, streamError("a chunk is not JSON", err)
		}
		if ch.Error != nil {
			return agent.Response{}, errorOf(*ch.Error, 0)
		}
		if id == "" {
			id = ch.ID
		}
		if ch.Usage != nil {
			usage = agent.Usage{InputTokens: ch.Usage.PromptTokens, OutputTokens: ch.Usage.CompletionTokens}
		}
		for _, choice := range ch.Choices {
			if choice.Index != 0 {
				continue // Docket asks for one choice; others are not its answer
			}
			if rc := choice.Delta.ReasoningContent; rc != nil {
				reason.WriteString(*rc)
			}
			if c := choice.Delta.Content; c != nil && *c != "" {
				text.WriteString(*c)
				onDelta(agent.Delta{Kind: agent.DeltaText, Text: *c})
			}
			for _, tc := range choice.Delta.ToolCalls {
				idx, err := callIndex(tc, calls, last)
				if err != nil {
					return agent.Response{}, err
				}
				last = idx
				c := calls[idx]
				if c == nil {
					if tc.Function.Name == "" {
						return agent.Response{}, streamError(fmt.Sprintf("tool call %d starts without a name", idx), nil)
					}
					id := tc.ID
					if id == "" {
						// Some compatible servers send no ids; the chunk id keeps ours unique.
						id = fmt.Sprintf("call_%s_%d", ch.ID, idx)
					}
					c = &call{pos: len(calls), id: id, name: tc.Function.Name}
					calls[idx] = c
					onDelta(agent.Delta{Kind: agent.DeltaToolCall, Index: c.pos, ID: c.id, Name: c.name})
				} else if (tc.ID != "" && tc.ID != c.id) || (tc.Function.Name != "" && tc.Function.Name != c.name) {
					return agent.Response{}, streamError(fmt.Sprintf("tool call %d changes its id or name mid-stream", idx), nil)
				}
				if tc.Function.Arguments != "" {
					c.args.WriteString(tc.Function.Arguments)
					onDelta(agent.Delta{Kind: agent.DeltaToolArgs, Index: c.pos, Text: tc.Function.Arguments})
				}
			}
			if choice.FinishReason != nil && *choice.FinishReason != "" {
				finish = *choice.FinishReason
			}
		}
	}
	msg := agent.Message{Role: agent.RoleAssistant, Text: text.String()}
	if reason.Len() > 0 {
		msg.Reasoning = []agent.Reasoning{{Text: reason.String()}}
	}
	for _, idx := range slices.Sorted(maps.Keys(calls)) {
		c := calls[idx]
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		if !agent.IsObject(json.RawMessage(args)) {
			return agent.Response{}, streamError(fmt.Sprintf("arguments of tool call %s are not a JSON object", c.id), nil)
		}
		msg.Calls = append(msg.Calls, agent.ToolCall{ID: c.id, Name: c.name, Arguments: json.RawMessage(args)})
	}
	out := agent.Response{Message: msg, Usage: usage, Stop: agent.StopEnd, RequestID: id}
	switch {
	case len(msg.Calls) > 0:
		out.Stop = agent.StopToolUse
	case finish == "length":
		out.Stop = agent.StopMaxTokens
	}
	return out, nil
}

// callIndex finds which call a fragment belongs to: its index when it has one; else a new
// call when it carries an id, else the call before it. Servers differ in what they send.
func callIndex(tc wireToolCall, calls map[int]*call, last int) (int, error) {
	switch {
	case tc.Index != nil:
		if *tc.Index < 0 || *tc.Index > 1<<10 {
			return 0, streamError(fmt.Sprintf("tool call index %d is out of range", *tc.Index), nil)
		}
		return *tc.Index, nil
	case tc.ID != "":
		next := 0
		for idx := range calls {
			next = max(next, idx+1)
		}
		return next, nil
	case last >= 0:
		return last, nil
	}
	return 0, streamError("a tool call fragment has neither index nor id", nil)
}

func streamError(what string, cause error) error {
	return &agent.ProviderError{Provider: "openai", Kind: agent.KindStream, Message: what, Err: cause}
}

// cutError is a stream that stopped before its end: asked for again ([agent.ProviderError.Cut]).
func cutError(what string, cause error) error {
	return &agent.ProviderError{Provider: "openai", Kind: agent.KindStream, Message: what, Err: cause, Cut: true}
}

// readError is a failed read of the stream: a cut when the connection failed or the
// stream ended inside an event, a malformed stream otherwise.
func readError(err error) error {
	if errors.Is(err, sse.ErrMalformed) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return streamError("read event", err)
	}
	return cutError("read event", err)
}
