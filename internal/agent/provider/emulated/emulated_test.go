package emulated_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/emulated"
	"github.com/docketrun/docket/internal/contract"
)

// inner is a fake endpoint without tool support: it answers each turn with the next of
// replies and records what it was sent.
type inner struct {
	replies []string
	got     []agent.Request
}

func (f *inner) Name() string { return "fake endpoint" }

func (f *inner) Turn(_ context.Context, req agent.Request, _ func(agent.Delta)) (agent.Response, error) {
	if err := req.Validate(); err != nil {
		return agent.Response{}, err
	}
	f.got = append(f.got, req)
	if len(f.replies) == 0 {
		return agent.Response{}, errors.New("fake endpoint: no reply left")
	}
	text := f.replies[0]
	f.replies = f.replies[1:]
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: text}, Stop: agent.StopEnd, Usage: agent.Usage{InputTokens: 100, OutputTokens: 10}}, nil
}

var tools = []agent.ToolDef{
	{Name: "OpenCase", Description: "opens a case", InputSchema: json.RawMessage(`{"type": "object", "properties": {"caseType": {"type": "string"}}}`)},
	{Name: "QueryBoard", Description: "reads the board", InputSchema: json.RawMessage(`{"type":"object"}`)},
}

var conversation = agent.Request{
	System: "be careful",
	Tools:  tools,
	Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "compute"},
		{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "emulated_1", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}},
		{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "emulated_1", Content: `{"accepted":false,"errorCode":"x"}`, IsError: true}}},
	},
}

func newProvider(t *testing.T, f *inner) *emulated.Provider {
	t.Helper()
	p, err := emulated.New(emulated.Config{Inner: f})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProvider_Turn(t *testing.T) {
	tests := []struct {
		name    string
		replies []string
		want    agent.Response
		calls   int // inner turns taken
	}{
		{"tool call", []string{`{"tool": "OpenCase", "arguments": {"caseType": "calc"}}`},
			agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "emulated_3", Name: "OpenCase", Arguments: json.RawMessage(`{"caseType": "calc"}`)}}},
				Stop: agent.StopToolUse, Usage: agent.Usage{InputTokens: 100, OutputTokens: 10}}, 1},
		{"final answer in a fence", []string{"```json\n{\"final\": \"total is 262800\"}\n```"},
			agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: "total is 262800"}, Stop: agent.StopEnd, Usage: agent.Usage{InputTokens: 100, OutputTokens: 10}}, 1},
		{"repaired after two refusals", []string{`Sure! {"tool": "OpenCase"}`, `{"tool": "Shell", "arguments": {}}`, `{"tool": "QueryBoard"}`},
			agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "emulated_3", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}},
				Stop: agent.StopToolUse, Usage: agent.Usage{InputTokens: 300, OutputTokens: 30}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &inner{replies: tt.replies}
			resp, err := newProvider(t, f).Turn(t.Context(), conversation, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("Turn response (-want +got):\n%s", diff)
			}
			if len(f.got) != tt.calls {
				t.Errorf("inner turns = %d, want %d", len(f.got), tt.calls)
			}
		})
	}
}

func TestProvider_Turn_innerRequest(t *testing.T) {
	f := &inner{replies: []string{`{"tool": "Nope"}`, `{"final": "ok"}`}}
	if _, err := newProvider(t, f).Turn(t.Context(), conversation, nil); err != nil {
		t.Fatal(err)
	}
	first := f.got[0]
	if first.Tools != nil {
		t.Errorf("inner request has tools %v; an endpoint without tool support must get none", first.Tools)
	}
	for _, want := range []string{"be careful", "exactly one JSON object", `- OpenCase: opens a case`, `{"properties":{"caseType":{"type":"string"}},"type":"object"}`} {
		if !strings.Contains(first.System, want) {
			t.Errorf("inner system prompt lacks %q:\n%s", want, first.System)
		}
	}
	wantMsgs := []agent.Message{
		{Role: agent.RoleUser, Text: "compute"},
		{Role: agent.RoleAssistant, Text: `{"tool":"QueryBoard","arguments":{}}`},
		{Role: agent.RoleUser, Text: "Error from QueryBoard:\n" + `{"accepted":false,"errorCode":"x"}`},
	}
	if diff := cmp.Diff(wantMsgs, first.Messages); diff != "" {
		t.Errorf("inner transcript (-want +got):\n%s", diff)
	}
	repair := f.got[1].Messages
	if n := len(repair); n != 5 || repair[3].Text != `{"tool": "Nope"}` || !strings.Contains(repair[4].Text, `"Nope" is not a tool; use one of OpenCase, QueryBoard`) {
		t.Errorf("repair turn does not feed the refusal back: %+v", repair[3:])
	}
}

func TestProvider_Turn_givesUp(t *testing.T) {
	f := &inner{replies: []string{"hello", "hello", "hello", "hello"}}
	_, err := newProvider(t, f).Turn(t.Context(), conversation, nil)
	pe, ok := errors.AsType[*agent.ProviderError](err)
	if !ok || pe.Kind != agent.KindReply || pe.Code() != contract.CodeModelReply {
		t.Fatalf("Turn error = %v, want a reply *agent.ProviderError", err)
	}
	if want := (agent.Usage{InputTokens: 300, OutputTokens: 30}); pe.Usage != want {
		t.Errorf("usage of the failed attempts = %+v, want %+v", pe.Usage, want)
	}
	if len(f.got) != emulated.DefaultMaxRepairs+1 {
		t.Errorf("inner turns = %d, want %d", len(f.got), emulated.DefaultMaxRepairs+1)
	}
}

func TestProvider_Name(t *testing.T) {
	if got := newProvider(t, &inner{}).Name(); got != "emulated tool use over fake endpoint" {
		t.Errorf("Name() = %q", got)
	}
}
