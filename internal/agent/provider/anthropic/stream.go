package anthropic

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

// block is one content block being streamed.
type block struct {
	kind    string          // "text", "tool_use", "thinking", "redacted_thinking", or another type whose deltas are ignored
	text    strings.Builder // text, or thinking: never the answer
	sig     string          // thinking: its signature
	data    string          // redacted_thinking: its data
	id      string
	name    string
	args    strings.Builder
	call    int // position among the tool calls, tool_use only
	stopped bool
}

// readStream gathers a Messages API event stream into a Response. It is strict about the
// event order the API documents: a delta for a block that was not started, a block started
// twice, a stream without message_stop, or JSON that does not parse is a KindStream error.
func readStream(r io.Reader, onDelta func(agent.Delta)) (agent.Response, error) {
	if onDelta == nil {
		onDelta = func(agent.Delta) {}
	}
	var (
		rd      = sse.NewReader(r)
		blocks  = map[int]*block{}
		calls   int
		usage   agent.Usage
		stop    string
		started bool
		id      string // the message's id, the request id when no header names one
	)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return agent.Response{}, cutError("the stream ended before message_stop", io.ErrUnexpectedEOF)
		}
		if err != nil {
			return agent.Response{}, readError(err)
		}
		var w wireEvent
		if err := json.Unmarshal([]byte(ev.Data), &w); err != nil {
			return agent.Response{}, streamError(fmt.Sprintf("event %q is not JSON", ev.Name), err)
		}
		if ev.Name != "" && ev.Name != w.Type {
			return agent.Response{}, streamError(fmt.Sprintf("event %q carries type %q", ev.Name, w.Type), nil)
		}
		if !started && w.Type != "message_start" && w.Type != "ping" && w.Type != "error" {
			return agent.Response{}, streamError(fmt.Sprintf("%s before message_start", w.Type), nil)
		}
		switch w.Type {
		case "ping":
		case "error":
			if w.Error == nil {
				return agent.Response{}, streamError("error event without error", nil)
			}
			return agent.Response{}, eventError(*w.Error)
		case "message_start":
			if started || w.Message == nil {
				return agent.Response{}, streamError("message_start repeated or empty", nil)
			}
			started = true
			id = w.Message.ID
			u := w.Message.Usage
			usage.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
			usage.OutputTokens = u.OutputTokens
		case "content_block_start":
			if w.Index == nil || w.ContentBlock == nil || blocks[*w.Index] != nil {
				return agent.Response{}, streamError("content_block_start without index or block, or for a block already started", nil)
			}
			b := &block{kind: w.ContentBlock.Type}
			switch b.kind {
			case "text":
				b.text.WriteString(w.ContentBlock.Text)
				if w.ContentBlock.Text != "" {
					onDelta(agent.Delta{Kind: agent.DeltaText, Text: w.ContentBlock.Text})
				}
			case "tool_use":
				if w.ContentBlock.ID == "" || w.ContentBlock.Name == "" {
					return agent.Response{}, streamError("tool_use block without id or name", nil)
				}
				b.id, b.name, b.call = w.ContentBlock.ID, w.ContentBlock.Name, calls
				calls++
				onDelta(agent.Delta{Kind: agent.DeltaToolCall, Index: b.call, ID: b.id, Name: b.name})
			case "thinking":
				b.text.WriteString(w.ContentBlock.Thinking)
				b.sig = w.ContentBlock.Signature
			case "redacted_thinking":
				b.data = w.ContentBlock.Data
			}
			blocks[*w.Index] = b
		case "content_block_delta":
			if w.Index == nil || w.Delta == nil {
				return agent.Response{}, streamError("content_block_delta without index or delta", nil)
			}
			b := blocks[*w.Index]
			if b == nil || b.stopped {
				return agent.Response{}, streamError(fmt.Sprintf("delta for block %d, which is not open", *w.Index), nil)
			}
			switch {
			case w.Delta.Type == "text_delta" && b.kind == "text":
				b.text.WriteString(w.Delta.Text)
				onDelta(agent.Delta{Kind: agent.DeltaText, Text: w.Delta.Text})
			case w.Delta.Type == "input_json_delta" && b.kind == "tool_use":
				b.args.WriteString(w.Delta.PartialJSON)
				onDelta(agent.Delta{Kind: agent.DeltaToolArgs, Index: b.call, Text: w.Delta.PartialJSON})
			case w.Delta.Type == "thinking_delta" && b.kind == "thinking":
				b.text.WriteString(w.Delta.Thinking) // kept for the next request; no delta: it is not the answer
			case w.Delta.Type == "signature_delta" && b.kind == "thinking":
				b.sig += w.Delta.Signature
			case w.Delta.Type == "text_delta" || w.Delta.Type == "input_json_delta" || w.Delta.Type == "thinking_delta" || w.Delta.Type == "signature_delta":
				return agent.Response{}, streamError(fmt.Sprintf("%s for a %s block", w.Delta.Type, b.kind), nil)
			}
			// Other deltas (citations) are not part of the answer.
		case "content_block_stop":
			if w.Index == nil || blocks[*w.Index] == nil || blocks[*w.Index].stopped {
				return agent.Response{}, streamError("content_block_stop for a block that is not open", nil)
			}
			b := blocks[*w.Index]
			b.stopped = true
			if b.kind == "tool_use" && b.args.Len() > 0 && !agent.IsObject(json.RawMessage(b.args.String())) {
				return agent.Response{}, streamError(fmt.Sprintf("arguments of tool call %s are not a JSON object", b.id), nil)
			}
		case "message_delta":
			if w.Delta != nil && w.Delta.StopReason != "" {
				stop = w.Delta.StopReason
			}
			if w.Usage != nil {
				// The API reports cumulative output tokens here.
				usage.OutputTokens = w.Usage.OutputTokens
				if in := w.Usage.InputTokens + w.Usage.CacheCreationInputTokens + w.Usage.CacheReadInputTokens; in > 0 {
					usage.InputTokens = in
				}
			}
		case "message_stop":
			out, err := finish(blocks, usage, stop)
			out.RequestID = id
			return out, err
		default:
			// New event types are additions to the protocol, not answers; skip them.
		}
	}
}

// finish assembles the message from its blocks in index order.
func finish(blocks map[int]*block, usage agent.Usage, stop string) (agent.Response, error) {
	msg := agent.Message{Role: agent.RoleAssistant}
	var text strings.Builder
	for _, i := range slices.Sorted(maps.Keys(blocks)) {
		b := blocks[i]
		if !b.stopped {
			return agent.Response{}, streamError(fmt.Sprintf("message_stop while block %d is open", i), nil)
		}
		switch b.kind {
		case "text":
			text.WriteString(b.text.String())
		case "thinking":
			msg.Reasoning = append(msg.Reasoning, agent.Reasoning{Text: b.text.String(), Signature: b.sig})
		case "redacted_thinking":
			msg.Reasoning = append(msg.Reasoning, agent.Reasoning{Redacted: b.data})
		case "tool_use":
			args := b.args.String()
			if args == "" {
				args = "{}"
			}
			msg.Calls = append(msg.Calls, agent.ToolCall{ID: b.id, Name: b.name, Arguments: json.RawMessage(args)})
		}
	}
	msg.Text = text.String()
	out := agent.Response{Message: msg, Usage: usage, Stop: agent.StopEnd}
	switch {
	case len(msg.Calls) > 0:
		out.Stop = agent.StopToolUse
	case stop == "max_tokens":
		out.Stop = agent.StopMaxTokens
	}
	return out, nil
}

func streamError(what string, cause error) error {
	return &agent.ProviderError{Provider: "anthropic", Kind: agent.KindStream, Message: what, Err: cause}
}

// cutError is a stream that stopped before its end: asked for again ([agent.ProviderError.Cut]).
func cutError(what string, cause error) error {
	return &agent.ProviderError{Provider: "anthropic", Kind: agent.KindStream, Message: what, Err: cause, Cut: true}
}

// readError is a failed read of the stream: a cut when the connection failed or the
// stream ended inside an event, a malformed stream otherwise.
func readError(err error) error {
	if errors.Is(err, sse.ErrMalformed) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return streamError("read event", err)
	}
	return cutError("read event", err)
}

// eventError maps an error event in the stream; the API sends one instead of an HTTP
// status once streaming has begun (for example overloaded_error).
func eventError(w wireError) error {
	e := &agent.ProviderError{Provider: "anthropic", Kind: agent.KindServer, Message: clip(w.Message)}
	if k := kindOf(w.Type, w.Message); k != "" {
		e.Kind = k
	}
	if w.Type == "overloaded_error" {
		e.Status = 529
	}
	return e
}
