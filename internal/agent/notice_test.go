package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// An error without a code is logged with its cause; the model reads a sentence that
// teaches, never the cause.
func TestErrorNoticeTeaches(t *testing.T) {
	var logs bytes.Buffer
	l := &Loop{log: slog.New(slog.NewTextHandler(&logs, nil))}
	call := ToolCall{ID: "call-1", Name: contract.ToolQueryBoard}
	text := l.errorNotice("c-1", call, errors.New("dial tcp 10.0.0.7:5432: secret detail"))
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(text), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Accepted || tr.ErrorCode != contract.CodeInternal || tr.RequestExecuted == nil || *tr.RequestExecuted {
		t.Fatalf("notice = %s; want a refusal, internal, requestExecuted false", text)
	}
	if strings.Contains(text, "secret detail") || tr.Teaching == "" {
		t.Fatalf("notice = %s; want a teaching sentence without the cause", text)
	}
	if !strings.Contains(logs.String(), "secret detail") || !strings.Contains(logs.String(), "call=call-1") {
		t.Fatalf("log = %q; want the cause with the call", logs.String())
	}
	if strings.Contains(text, `"view"`) || strings.Contains(text, `"operations"`) {
		t.Fatalf("notice = %s; a runtime's notice carries no view or operations", text)
	}

	coded := l.errorNotice("c-1", call, &contract.Error{Code: contract.CodeOutcomeUnknown, Teaching: "ask the state"})
	var ctr contract.ToolResult
	if err := json.Unmarshal([]byte(coded), &ctr); err != nil {
		t.Fatal(err)
	}
	if tr = ctr; tr.ErrorCode != contract.CodeOutcomeUnknown || tr.Teaching != "ask the state" || tr.RequestExecuted != nil {
		t.Fatalf("coded notice = %s; want its code and teaching, requestExecuted left out", coded)
	}
}
