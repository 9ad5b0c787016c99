package providertest_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/anthropic"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
)

const script = `{"turns": [
  {"say": "opening", "calls": [{"as": "open", "tool": "OpenCase", "arguments": {"caseType": "calc", "businessKey": {"job_id": "j-1"}}}]},
  {"calls": [{"tool": "QueryBoard", "arguments": {"caseId": {"$ref": "open.result.caseId"}}}, {"tool": "ReadArtifact", "arguments": {"ref": "a1"}}]},
  {"final": "done"}]}`

// TestServers_PlayOverTheWire: the real providers, talking to each server in its wire
// format, get the script's turns back as streamed tool calls and a final answer, the
// second turn's argument resolved from the first call's result as the server read it
// from the conversation the client sent. A wrong key is refused as the API refuses it.
func TestServers_PlayOverTheWire(t *testing.T) {
	s, err := scripted.ParseJSON([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-test-key"
	tests := []struct {
		name   string
		server func() *providertest.Server
		client func(url string, k agent.Key) (agent.Provider, error)
	}{
		{"openai", func() *providertest.Server { return providertest.NewOpenAI(t, s, key) }, func(url string, k agent.Key) (agent.Provider, error) {
			return openai.New(openai.Config{URL: url, Model: "m-openai", Key: k})
		}},
		{"anthropic", func() *providertest.Server { return providertest.NewAnthropic(t, s, key) }, func(url string, k agent.Key) (agent.Provider, error) {
			return anthropic.New(anthropic.Config{URL: url, Model: "m-anthropic", Key: k})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tt.server()
			p, err := tt.client(srv.URL, agent.NewKey(key))
			if err != nil {
				t.Fatal(err)
			}
			tools := []agent.ToolDef{{Name: "OpenCase", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}}
			req := agent.Request{System: "standing instructions", Tools: tools, Messages: []agent.Message{{Role: agent.RoleUser, Text: "verify j-1"}}}
			r1, err := p.Turn(t.Context(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := agent.Message{Role: agent.RoleAssistant, Text: "opening", Calls: []agent.ToolCall{{ID: "scripted_1_1", Name: "OpenCase", Arguments: json.RawMessage(`{"businessKey":{"job_id":"j-1"},"caseType":"calc"}`)}}}
			if diff := cmp.Diff(want, r1.Message); diff != "" || r1.Stop != agent.StopToolUse {
				t.Fatalf("turn 1 (-want +got):\n%s stop %s", diff, r1.Stop)
			}
			req.Messages = append(req.Messages, r1.Message, agent.Message{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "scripted_1_1", Content: `{"result":{"caseId":"case-7"}}`}}})
			r2, err := p.Turn(t.Context(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantCalls := []agent.ToolCall{{ID: "scripted_2_1", Name: "QueryBoard", Arguments: json.RawMessage(`{"caseId":"case-7"}`)},
				{ID: "scripted_2_2", Name: "ReadArtifact", Arguments: json.RawMessage(`{"ref":"a1"}`)}}
			if diff := cmp.Diff(wantCalls, r2.Message.Calls); diff != "" {
				t.Fatalf("turn 2 calls (-want +got):\n%s", diff)
			}
			req.Messages = append(req.Messages, r2.Message, agent.Message{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "scripted_2_1", Content: "{}"}, {CallID: "scripted_2_2", Content: "rest", IsError: true}}})
			r3, err := p.Turn(t.Context(), req, nil)
			if err != nil || r3.Message.Text != "done" || r3.Stop != agent.StopEnd || r3.Usage.InputTokens == 0 {
				t.Fatalf("turn 3 = %+v, %v; want the final answer with usage", r3, err)
			}
			for _, seen := range srv.Seen() {
				if !seen.KeyOK || !seen.Stream || seen.System != "standing instructions" {
					t.Errorf("the server saw %+v; want the key, a stream and the system prompt", seen)
				}
			}
			bad, err := tt.client(srv.URL, agent.NewKey("sk-wrong"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = bad.Turn(t.Context(), req, nil)
			if pe, ok := err.(*agent.ProviderError); !ok || pe.Kind != agent.KindAuth {
				t.Errorf("a wrong key = %v, want an auth ProviderError", err)
			}
		})
	}
}
