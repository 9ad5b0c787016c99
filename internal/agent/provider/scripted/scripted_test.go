package scripted_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/contract"
)

func load(t *testing.T, path string) *scripted.Script {
	t.Helper()
	s, err := scripted.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoad_jsonAndTOMLAgree(t *testing.T) {
	j, tm := load(t, "testdata/calc.json"), load(t, "testdata/calc.toml")
	// Arguments are compared as JSON values: the two formats space them differently.
	asJSON := cmp.Transformer("json", func(raw json.RawMessage) any {
		var v any
		json.Unmarshal(raw, &v)
		return v
	})
	if diff := cmp.Diff(j, tm, asJSON); diff != "" {
		t.Errorf("TOML script differs from JSON script (-json +toml):\n%s", diff)
	}
}

func TestParseJSON_invalid(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		teach string
	}{
		{"not JSON", `{"turns": [`, "not valid JSON"},
		{"unknown key", `{"turns": [{"final": "x", "mood": "calm"}]}`, "unknown field"},
		{"data after", `{"turns": [{"final": "x"}]} {}`, "after its JSON object"},
		{"no turns", `{"turns": []}`, "no turns"},
		{"empty turn", `{"turns": [{"say": "hm"}]}`, "neither calls nor a final answer"},
		{"calls and final", `{"turns": [{"final": "x", "calls": [{"tool": "QueryBoard"}]}]}`, "calls and a final answer"},
		{"no tool", `{"turns": [{"calls": [{"arguments": {}}]}]}`, "names no tool"},
		{"arguments not an object", `{"turns": [{"calls": [{"tool": "QueryBoard", "arguments": [1]}]}]}`, "not an object"},
		{"bad label", `{"turns": [{"calls": [{"as": "Open", "tool": "OpenCase"}]}]}`, "labels are lower case"},
		{"duplicate label", `{"turns": [{"calls": [{"as": "a", "tool": "OpenCase"}, {"as": "a", "tool": "QueryBoard"}]}]}`, "used twice"},
		{"ref to unknown label", `{"turns": [{"calls": [{"tool": "QueryBoard", "arguments": {"x": {"$ref": "open.result"}}}]}]}`, "no call of an earlier turn"},
		{"ref within the same turn", `{"turns": [{"calls": [{"as": "open", "tool": "OpenCase"}, {"tool": "QueryBoard", "arguments": {"x": {"$ref": "open.result"}}}]}]}`, "no call of an earlier turn"},
		{"ref not a string", `{"turns": [{"calls": [{"as": "a", "tool": "OpenCase"}]}, {"calls": [{"tool": "QueryBoard", "arguments": {"x": {"$ref": 3}}}]}]}`, "one key"},
		{"ref with other keys", `{"turns": [{"calls": [{"as": "a", "tool": "OpenCase"}]}, {"calls": [{"tool": "QueryBoard", "arguments": {"x": {"$ref": "a.b", "y": 1}}}]}]}`, "one key"},
		{"ref with empty segment", `{"turns": [{"calls": [{"as": "a", "tool": "OpenCase"}]}, {"calls": [{"tool": "QueryBoard", "arguments": [{"$ref": "a..b"}]}]}]}`, "not an object"},
		{"nested ref with empty segment", `{"turns": [{"calls": [{"as": "a", "tool": "OpenCase"}]}, {"calls": [{"tool": "QueryBoard", "arguments": {"l": [{"$ref": "a..b"}]}}]}]}`, "empty segment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scripted.ParseJSON([]byte(tt.text))
			if contract.CodeOf(err) != contract.CodeScriptInvalid || !strings.Contains(err.Error(), tt.teach) {
				t.Errorf("ParseJSON(%s) error = %v, want %s saying %q", tt.text, err, contract.CodeScriptInvalid, tt.teach)
			}
		})
	}
}

func TestParseTOML_unknownKey(t *testing.T) {
	_, err := scripted.ParseTOML([]byte("[[turns]]\nfinal = \"x\"\nmood = \"calm\"\n"))
	if contract.CodeOf(err) != contract.CodeScriptInvalid || !strings.Contains(err.Error(), "turns.mood") {
		t.Errorf("ParseTOML error = %v, want %s naming turns.mood", err, contract.CodeScriptInvalid)
	}
}

func newProvider(t *testing.T) *scripted.Provider {
	t.Helper()
	p, err := scripted.New(load(t, "testdata/calc.json"), "calc.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openResult is what the model was shown for OpenCase; 9007199254740993 is past float64's
// exact integers, so passing it through unchanged shows numbers are kept exact.
const openResult = `{"accepted":true,"result":{"caseId":"case-1","root":"n-9","items":[{"n":1},{"n":9007199254740993}]}}`

func TestProvider_Turn(t *testing.T) {
	p := newProvider(t)
	conv := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "go"}}}
	turn := func() agent.Response {
		t.Helper()
		resp, err := p.Turn(t.Context(), conv, nil)
		if err != nil {
			t.Fatal(err)
		}
		conv.Messages = append(conv.Messages, resp.Message)
		return resp
	}

	first := turn()
	want := agent.Response{Stop: agent.StopToolUse, Message: agent.Message{Role: agent.RoleAssistant, Text: "scripted model (no inference): opening the case",
		Calls: []agent.ToolCall{{ID: "scripted_1_1", Name: "OpenCase", Arguments: json.RawMessage(`{"businessKey":{"job_id":"calc-001"},"caseType":"calc"}`)}}}}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("turn 1 (-want +got):\n%s", diff)
	}
	conv.Messages = append(conv.Messages, agent.Message{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "scripted_1_1", Content: openResult}}})

	second := turn()
	want = agent.Response{Stop: agent.StopToolUse, Message: agent.Message{Role: agent.RoleAssistant, Text: "scripted model (no inference)", Calls: []agent.ToolCall{
		{ID: "scripted_2_1", Name: "ApplyBatch", Arguments: json.RawMessage(`{"caseId":"case-1","operations":[{"args":{"case":"n-9","n":9007199254740993},"op":"assert_fact","predicate":"goal_node"}]}`)},
		{ID: "scripted_2_2", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)},
	}}}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("turn 2 (-want +got):\n%s", diff)
	}
	conv.Messages = append(conv.Messages, agent.Message{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "scripted_2_1", Content: "{}"}, {CallID: "scripted_2_2", Content: "{}"}}})

	third := turn()
	want = agent.Response{Stop: agent.StopEnd, Message: agent.Message{Role: agent.RoleAssistant, Text: "scripted model (no inference): the case is closed"}}
	if diff := cmp.Diff(want, third); diff != "" {
		t.Errorf("turn 3 (-want +got):\n%s", diff)
	}
	conv.Messages = append(conv.Messages, agent.Message{Role: agent.RoleUser, Text: "more?"})

	past := turn()
	if !strings.HasPrefix(past.Message.Text, scripted.Banner) || len(past.Message.Calls) != 0 || past.Stop != agent.StopEnd {
		t.Errorf("turn past the end = %+v, want a final answer starting %q", past, scripted.Banner)
	}
	if got := p.Name(); got != "scripted model (no inference): calc.json" {
		t.Errorf("Name() = %q", got)
	}
}

func TestProvider_Turn_unresolvableRef(t *testing.T) {
	tests := []struct {
		name   string
		result string
		callID string
		teach  string
	}{
		{"result cut", openResult[:40] + "\n[docket: output cut ...]", "scripted_1_1", "not JSON (it may have been cut"},
		{"missing field", `{"result":{"caseId":"c"}}`, "scripted_1_1", `open.result has no field "root"`},
		{"index out of range", `{"result":{"caseId":"c","root":"r","items":[{"n":1}]}}`, "scripted_1_1", `open.result.items is a list of 1`},
		{"field of a scalar", `{"result":{"caseId":"c","root":"r","items":"none"}}`, "scripted_1_1", "is a scalar"},
		{"no result for the label", `{}`, "other_call", "has no result in the conversation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv := agent.Request{Messages: []agent.Message{
				{Role: agent.RoleUser, Text: "go"},
				{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: tt.callID, Name: "OpenCase", Arguments: json.RawMessage(`{}`)}}},
				{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: tt.callID, Content: tt.result}}},
			}}
			_, err := newProvider(t).Turn(t.Context(), conv, nil)
			if contract.CodeOf(err) != contract.CodeScriptInvalid || !strings.Contains(err.Error(), tt.teach) || !strings.Contains(err.Error(), scripted.Banner) {
				t.Errorf("Turn error = %v, want %s saying %q and %q", err, contract.CodeScriptInvalid, tt.teach, scripted.Banner)
			}
		})
	}
}

// TestProvider_Turn_endsOnAWaitingCall: a write whose answer shows its Operation waiting
// (for a decision, or still running at the hold bound) ends the scripted turn, which says
// what it waits on, as a model with nothing to go on would; once the outcome is shown
// (after the runtime's wake, or before the next turn) the script goes on from the turn
// after the write's, the turn that waited not counted as one of the script's.
func TestProvider_Turn_endsOnAWaitingCall(t *testing.T) {
	batch := func(state contract.OperationState) string {
		return `{"accepted":true,"operations":[{"tool":"ApplyBatch","label":"ApplyBatch 1 operation","state":"` + string(state) + `","at":"2026-12-02T00:00:00Z","since":"2026-12-02T00:00:00Z","decision":"req-7"}]}`
	}
	const shown = "[docket: outcomes you have not read yet]\n" + `{"callId":"scripted_2_1","tool":"ApplyBatch","label":"ApplyBatch 1 operation","state":"done","at":"2026-12-02T00:00:00Z","since":"2026-12-02T00:00:01Z"}`
	tests := []struct {
		name  string
		state contract.OperationState
		text  string // the text of the message with the results
		wait  string // what the ended turn says; "" when the script goes on
	}{
		{"waiting for a decision", contract.OpWaitingForDecision, "", "ApplyBatch 1 operation (call scripted_2_1) is waiting for decision on request req-7"},
		{"running at the hold bound", contract.OpRunning, "", "ApplyBatch 1 operation (call scripted_2_1) is running"},
		{"settled", contract.OpDone, "", ""},
		{"handed to a person", contract.OpNeedsPerson, "", ""},
		{"waiting, its outcome shown before the turn", contract.OpWaitingForDecision, shown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t)
			conv := agent.Request{Messages: []agent.Message{
				{Role: agent.RoleUser, Text: "go"},
				{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "scripted_1_1", Name: "OpenCase", Arguments: json.RawMessage(`{}`)}}},
				{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "scripted_1_1", Content: openResult}}},
				{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "scripted_2_1", Name: "ApplyBatch", Arguments: json.RawMessage(`{}`)}, {ID: "scripted_2_2", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}},
				{Role: agent.RoleUser, Text: tt.text, Results: []agent.ToolResult{{CallID: "scripted_2_1", Content: batch(tt.state)}, {CallID: "scripted_2_2", Content: "{}"}}},
			}}
			resp, err := p.Turn(t.Context(), conv, nil)
			if err != nil {
				t.Fatal(err)
			}
			const final = "scripted model (no inference): the case is closed"
			if tt.wait == "" {
				if resp.Message.Text != final || resp.Stop != agent.StopEnd {
					t.Errorf("Turn = %+v, want the script's next turn, %q", resp, final)
				}
				return
			}
			if !strings.HasPrefix(resp.Message.Text, scripted.Banner) || !strings.Contains(resp.Message.Text, tt.wait) ||
				len(resp.Message.Calls) != 0 || resp.Stop != agent.StopEnd {
				t.Fatalf("Turn = %+v, want the turn ended saying %q", resp, tt.wait)
			}
			// The runtime wakes the conversation with the outcome: the script goes on.
			conv.Messages = append(conv.Messages, resp.Message, agent.Message{Role: agent.RoleUser, Text: agent.WakeText + "\n" + shown})
			resp, err = p.Turn(t.Context(), conv, nil)
			if err != nil || resp.Message.Text != final {
				t.Errorf("Turn after the wake = %+v, %v; want the script's next turn, %q", resp, err, final)
			}
		})
	}
}
