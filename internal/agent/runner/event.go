package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// Event is one line of docket agent run -o json (docs/cli.md): each answered tool call,
// then the end.
type Event struct {
	Event        string          `json:"event"` // "tool" or "end"
	Conversation string          `json:"conversation"`
	Tool         string          `json:"tool,omitempty"`
	CallID       string          `json:"callId,omitempty"`
	ErrorCode    contract.Code   `json:"errorCode,omitempty"`
	Teaching     string          `json:"teaching,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"` // the tool result the model read
	// The end: completed, pending (writes whose outcome has not come) or failed.
	State   string          `json:"state,omitempty"`
	Final   string          `json:"final,omitempty"`
	Pending []agent.Pending `json:"pending,omitempty"`
	// ClosedCases are the Cases the run closed, each with its root (the end only).
	ClosedCases []ClosedCase `json:"closedCases,omitempty"`
	// Task is the authority's task of a pinned run (the end only).
	Task contract.TaskID `json:"task,omitempty"`
}

// ToolEvent is the Event of one answered call in conversation: the result the model
// read, kept as JSON when it is JSON and as a string otherwise, with the errorCode and
// teaching of a refusal.
func ToolEvent(conversation string, call agent.ToolCall, r agent.ToolResult) Event {
	code, teaching := Refusal(r)
	ev := Event{Event: "tool", Conversation: conversation, Tool: call.Name, CallID: call.ID, ErrorCode: code, Teaching: teaching}
	if json.Valid([]byte(r.Content)) {
		ev.Result = json.RawMessage(r.Content)
	} else if b, err := json.Marshal(r.Content); err == nil {
		ev.Result = b
	}
	return ev
}

// EventWriter writes Events to W, one JSON object a line, and keeps the first failure
// to encode or write one for Err: a tool call's progress has no error to return.
type EventWriter struct {
	W   io.Writer
	err error
}

// Emit writes ev as one line.
func (w *EventWriter) Emit(ev Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		w.err = errors.Join(w.err, fmt.Errorf("encode a run event: %w", err))
		return
	}
	if _, err := fmt.Fprintln(w.W, string(b)); err != nil {
		w.err = errors.Join(w.err, fmt.Errorf("write a run event: %w", err))
	}
}

// Err is every failure of Emit so far, nil when none.
func (w *EventWriter) Err() error { return w.err }

// SendWaiting sends text to conversation id over l and, while the run ends with writes
// whose outcome has not come, waits up to wait in all for their outcomes and resumes the
// conversation with them (nothing is sent again); what it waits for is said on log.
func SendWaiting(ctx context.Context, l *agent.Loop, id, text string, wait time.Duration, log io.Writer) (agent.Outcome, error) {
	out, err := l.Send(ctx, id, text)
	for deadline := time.Now().Add(wait); err == nil && len(out.Pending) > 0 && wait > 0; {
		fmt.Fprintf(log, "docket agent: waiting up to %s for %d pending outcome(s)\n", time.Until(deadline).Round(time.Second), len(out.Pending))
		var ok bool
		if ok, err = l.Await(ctx, out.Pending, time.Until(deadline)); err != nil || !ok {
			break
		}
		out, err = l.Send(ctx, id, agent.WakeText)
	}
	return out, err
}
