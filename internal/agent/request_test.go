package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

func call(id, name string) agent.ToolCall {
	return agent.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}
}

func result(id string) agent.ToolResult { return agent.ToolResult{CallID: id, Content: "{}"} }

func TestRequest_Validate(t *testing.T) {
	user := agent.Message{Role: agent.RoleUser, Text: "go"}
	schema := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name  string
		req   agent.Request
		teach string // "" when valid
	}{
		{"one user message", agent.Request{Messages: []agent.Message{user}}, ""},
		{"answered calls in another order", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Text: "two", Calls: []agent.ToolCall{call("a", "QueryBoard"), call("b", "OpenCase")}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{result("b"), result("a")}, Text: "and"}}}, ""},
		{"empty", agent.Request{}, "empty"},
		{"starts with assistant", agent.Request{Messages: []agent.Message{{Role: agent.RoleAssistant, Text: "hi"}}}, `role "assistant" where "user" belongs`},
		{"two user messages", agent.Request{Messages: []agent.Message{user, user}}, `role "user" where "assistant" belongs`},
		{"ends with assistant", agent.Request{Messages: []agent.Message{user, {Role: agent.RoleAssistant, Text: "hi"}}}, "ends with an assistant message"},
		{"unanswered call", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Calls: []agent.ToolCall{call("a", "QueryBoard"), call("b", "OpenCase")}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{result("a")}}}}, "tool call b (OpenCase) has no result"},
		{"result for no call", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Calls: []agent.ToolCall{call("a", "QueryBoard")}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{result("a"), result("z")}}}}, `answers tool call "z"`},
		{"result answered twice", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Calls: []agent.ToolCall{call("a", "QueryBoard")}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{result("a"), result("a")}}}}, `answers tool call "a"`},
		{"results in the first message", agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Results: []agent.ToolResult{result("a")}}}}, `answers tool call "a"`},
		{"results on an assistant message", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Text: "x", Results: []agent.ToolResult{result("a")}}, user}}, "carries tool results"},
		{"calls on a user message", agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "x", Calls: []agent.ToolCall{call("a", "Q")}}}}, "only the assistant calls tools"},
		{"empty assistant message", agent.Request{Messages: []agent.Message{user, {Role: agent.RoleAssistant}, user}}, "is empty"},
		{"empty user message", agent.Request{Messages: []agent.Message{{Role: agent.RoleUser}}}, "is empty"},
		{"duplicate call id", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Calls: []agent.ToolCall{call("a", "QueryBoard")}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{result("a")}},
			{Role: agent.RoleAssistant, Calls: []agent.ToolCall{call("a", "QueryBoard")}},
			{Role: agent.RoleUser, Results: []agent.ToolResult{result("a")}}}}, "appears twice"},
		{"call without name", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Calls: []agent.ToolCall{call("a", "")}}, {Role: agent.RoleUser, Results: []agent.ToolResult{result("a")}}}}, "without id or name"},
		{"arguments not an object", agent.Request{Messages: []agent.Message{user,
			{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "a", Name: "Q", Arguments: json.RawMessage(`[]`)}}}, {Role: agent.RoleUser, Results: []agent.ToolResult{result("a")}}}}, "not a JSON object"},
		{"duplicate tool", agent.Request{Messages: []agent.Message{user}, Tools: []agent.ToolDef{{Name: "Q", InputSchema: schema}, {Name: "Q", InputSchema: schema}}}, "given twice"},
		{"schema not an object", agent.Request{Messages: []agent.Message{user}, Tools: []agent.ToolDef{{Name: "Q", InputSchema: json.RawMessage(`true`)}}}, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.teach == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if contract.CodeOf(err) != contract.CodeInvalidArgument || !strings.Contains(err.Error(), tt.teach) {
				t.Errorf("Validate() = %v, want %s saying %q", err, contract.CodeInvalidArgument, tt.teach)
			}
		})
	}
}

func TestIsObject(t *testing.T) {
	tests := []struct {
		raw  string
		want bool
	}{
		{`{}`, true}, {` {"a":1} `, true}, {`[]`, false}, {`null`, false}, {``, false}, {`{"a":`, false}, {`{} {}`, false},
	}
	for _, tt := range tests {
		if got := agent.IsObject(json.RawMessage(tt.raw)); got != tt.want {
			t.Errorf("IsObject(%q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}
