package runner

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// TestToolEvent: a tool call's line carries the result the model read, as JSON when it
// is JSON and as a JSON string otherwise, and a refusal's errorCode and teaching.
func TestToolEvent(t *testing.T) {
	t.Parallel()
	call := agent.ToolCall{ID: "t1", Name: "ApplyAction"}
	tests := []struct {
		name, content string
		want          Event
	}{
		{"a JSON result", `{"ok":true}`,
			Event{Event: "tool", Conversation: "c-1", Tool: "ApplyAction", CallID: "t1", Result: json.RawMessage(`{"ok":true}`)}},
		{"a text result", "done: 3 files",
			Event{Event: "tool", Conversation: "c-1", Tool: "ApplyAction", CallID: "t1", Result: json.RawMessage(`"done: 3 files"`)}},
		{"a refusal", `{"errorCode":"forbidden","teaching":"ask  a member"}`,
			Event{Event: "tool", Conversation: "c-1", Tool: "ApplyAction", CallID: "t1", ErrorCode: contract.CodeForbidden, Teaching: "ask a member",
				Result: json.RawMessage(`{"errorCode":"forbidden","teaching":"ask  a member"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ToolEvent("c-1", call, agent.ToolResult{CallID: "t1", Content: tt.content})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ToolEvent (-want +got):\n%s", diff)
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestEventWriter: one JSON object a line, and a failed write kept for Err rather than
// dropped.
func TestEventWriter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := &EventWriter{W: &b}
	w.Emit(Event{Event: "tool", Conversation: "c-1"})
	w.Emit(Event{Event: "end", Conversation: "c-1", State: "completed"})
	if want := `{"event":"tool","conversation":"c-1"}` + "\n" + `{"event":"end","conversation":"c-1","state":"completed"}` + "\n"; b.String() != want || w.Err() != nil {
		t.Errorf("wrote %q, %v; want %q", b.String(), w.Err(), want)
	}
	f := &EventWriter{W: failWriter{}}
	f.Emit(Event{Event: "end"})
	if err := f.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err after a failed write = %v, want it named", err)
	}
}
