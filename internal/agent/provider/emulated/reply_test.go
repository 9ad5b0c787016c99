package emulated_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/emulated"
	"github.com/docketrun/docket/internal/contract"
)

func TestParseReply(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		want  emulated.Reply
		teach string // a fragment of the teaching sentence when refused
	}{
		{"tool call", `{"tool":"OpenCase","arguments":{"caseType":"calc"}}`, emulated.Reply{Tool: "OpenCase", Arguments: json.RawMessage(`{"caseType":"calc"}`)}, ""},
		{"tool call without arguments", ` {"tool":"QueryBoard"} `, emulated.Reply{Tool: "QueryBoard", Arguments: json.RawMessage(`{}`)}, ""},
		{"null arguments", `{"tool":"QueryBoard","arguments":null}`, emulated.Reply{Tool: "QueryBoard", Arguments: json.RawMessage(`{}`)}, ""},
		{"final", `{"final":"done"}`, emulated.Reply{Final: "done"}, ""},
		{"fenced", "```\n{\"final\":\"done\"}\n```", emulated.Reply{Final: "done"}, ""},
		{"fenced json", "```json\n{\"final\":\"done\"}\n```", emulated.Reply{Final: "done"}, ""},
		{"fenced other language", "```python\n{\"final\":\"done\"}\n```", emulated.Reply{}, "does not start with a JSON object"},
		{"empty", "  ", emulated.Reply{}, "the reply is empty"},
		{"prose before", `Sure: {"final":"x"}`, emulated.Reply{}, "no text before it"},
		{"prose after", `{"final":"x"} hope this helps`, emulated.Reply{}, "text after the JSON object"},
		{"two objects", `{"final":"x"}{"final":"y"}`, emulated.Reply{}, "text after the JSON object"},
		{"truncated", `{"tool":"OpenCase","arguments":{"caseType":`, emulated.Reply{}, "not one valid JSON object"},
		{"unknown key", `{"tool":"OpenCase","args":{}}`, emulated.Reply{}, `other than "tool", "arguments" and "final"`},
		{"both", `{"tool":"OpenCase","final":"x"}`, emulated.Reply{}, "both"},
		{"neither", `{}`, emulated.Reply{}, "neither"},
		{"unknown tool", `{"tool":"Shell","arguments":{}}`, emulated.Reply{}, `"Shell" is not a tool; use one of OpenCase, QueryBoard`},
		{"arguments not an object", `{"tool":"OpenCase","arguments":[1]}`, emulated.Reply{}, `"arguments" is not a JSON object`},
		{"final with arguments", `{"final":"x","arguments":{}}`, emulated.Reply{}, "takes no"},
		{"empty final", `{"final":" "}`, emulated.Reply{}, "empty"},
		{"final not a string", `{"final":3}`, emulated.Reply{}, "not one valid JSON object"},
		{"array", `[{"final":"x"}]`, emulated.Reply{}, "does not start with a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := emulated.ParseReply(tt.text, tools)
			if tt.teach != "" {
				if contract.CodeOf(err) != contract.CodeModelReply || !strings.Contains(err.Error(), tt.teach) {
					t.Fatalf("ParseReply(%q) error = %v, want %s teaching %q", tt.text, err, contract.CodeModelReply, tt.teach)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseReply(%q) error = %v", tt.text, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseReply(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestParseReply_noTools(t *testing.T) {
	_, err := emulated.ParseReply(`{"tool":"OpenCase"}`, nil)
	if err == nil || !strings.Contains(err.Error(), `reply {"final": "..."}`) {
		t.Errorf("ParseReply with no tools = %v, want a refusal that asks for a final answer", err)
	}
}

// FuzzParseReply checks that whatever a model sends, ParseReply either refuses it with a
// code or returns exactly one of a known tool call with object arguments or a final answer.
func FuzzParseReply(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/replies/*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := emulated.ParseReply(text, tools)
		if err != nil {
			if contract.CodeOf(err) != contract.CodeModelReply {
				t.Fatalf("ParseReply(%q) error %v has no %s code", text, err, contract.CodeModelReply)
			}
			return
		}
		switch {
		case r.Tool != "" && r.Final != "", r.Tool == "" && r.Final == "":
			t.Fatalf("ParseReply(%q) = %+v, want exactly one of a tool call and a final answer", text, r)
		case r.Tool != "" && (r.Tool != "OpenCase" && r.Tool != "QueryBoard" || !agent.IsObject(r.Arguments)):
			t.Fatalf("ParseReply(%q) = %+v: unknown tool or non-object arguments", text, r)
		}
	})
}
