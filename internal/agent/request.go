package agent

import (
	"bytes"
	"encoding/json"

	"github.com/docketrun/docket/internal/contract"
)

// Validate checks the shape every provider relies on: the conversation starts and ends
// with a user message, roles alternate, each assistant message's tool calls are answered,
// all and only, by the results of the user message right after it, call ids are unique,
// arguments are JSON objects, and tool names are unique. The wire formats of both native
// APIs refuse anything else, and a refusal here names the message instead of a 400.
func (r Request) Validate() error {
	if len(r.Messages) == 0 {
		return contract.Errorf(contract.CodeInvalidArgument, "the conversation is empty; start it with a user message")
	}
	seen := map[string]bool{}
	for i, m := range r.Messages {
		want := RoleUser
		if i%2 == 1 {
			want = RoleAssistant
		}
		if m.Role != want {
			return contract.Errorf(contract.CodeInvalidArgument, "message %d has role %q where %q belongs; conversations alternate user and assistant, starting with user", i, m.Role, want)
		}
		switch m.Role {
		case RoleAssistant:
			if len(m.Results) > 0 {
				return contract.Errorf(contract.CodeInvalidArgument, "assistant message %d carries tool results; results belong in the user message after the calls", i)
			}
			if m.Text == "" && len(m.Calls) == 0 {
				return contract.Errorf(contract.CodeInvalidArgument, "assistant message %d is empty; drop it or give it text", i)
			}
			for _, c := range m.Calls {
				if err := checkCall(i, c, seen); err != nil {
					return err
				}
			}
		case RoleUser:
			if len(m.Calls) > 0 {
				return contract.Errorf(contract.CodeInvalidArgument, "user message %d carries tool calls; only the assistant calls tools", i)
			}
			var calls []ToolCall
			if i > 0 {
				calls = r.Messages[i-1].Calls
			}
			if err := checkAnswers(i, calls, m.Results); err != nil {
				return err
			}
			if m.Text == "" && len(m.Results) == 0 {
				return contract.Errorf(contract.CodeInvalidArgument, "user message %d is empty; give it text or tool results", i)
			}
		}
	}
	if last := r.Messages[len(r.Messages)-1]; last.Role != RoleUser {
		return contract.Errorf(contract.CodeInvalidArgument, "the conversation ends with an assistant message; answer its tool calls or add a user message before the next turn")
	}
	names := map[string]bool{}
	for _, t := range r.Tools {
		if t.Name == "" || names[t.Name] {
			return contract.Errorf(contract.CodeInvalidArgument, "tool name %q is empty or given twice; give each tool one unique name", t.Name)
		}
		names[t.Name] = true
		if !IsObject(t.InputSchema) {
			return contract.Errorf(contract.CodeInvalidArgument, "tool %s has an input schema that is not a JSON object; give it a JSON Schema object", t.Name)
		}
	}
	return nil
}

func checkCall(i int, c ToolCall, seen map[string]bool) error {
	if c.ID == "" || c.Name == "" {
		return contract.Errorf(contract.CodeInvalidArgument, "assistant message %d has a tool call without id or name; every call needs both", i)
	}
	if seen[c.ID] {
		return contract.Errorf(contract.CodeInvalidArgument, "tool call id %q appears twice; call ids are unique in a conversation", c.ID)
	}
	seen[c.ID] = true
	if !IsObject(c.Arguments) {
		return contract.Errorf(contract.CodeInvalidArgument, "tool call %s has arguments that are not a JSON object; send an object, {} when there are none", c.ID)
	}
	return nil
}

// checkAnswers wants results to answer exactly calls, in any order.
func checkAnswers(i int, calls []ToolCall, results []ToolResult) error {
	open := map[string]bool{}
	for _, c := range calls {
		open[c.ID] = true
	}
	for _, res := range results {
		if !open[res.CallID] {
			return contract.Errorf(contract.CodeInvalidArgument, "user message %d answers tool call %q, which the assistant message before it did not make or which is answered twice", i, res.CallID)
		}
		delete(open, res.CallID)
	}
	for _, c := range calls {
		if open[c.ID] {
			return contract.Errorf(contract.CodeInvalidArgument, "tool call %s (%s) has no result in user message %d; answer every call before the next turn", c.ID, c.Name, i)
		}
	}
	return nil
}

// IsObject reports whether raw is one JSON object. Providers use it to check a model's
// tool-call arguments before they reach the runtime.
func IsObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil
}
