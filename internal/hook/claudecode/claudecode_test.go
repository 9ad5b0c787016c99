package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/hook"
	"github.com/docketrun/docket/internal/hook/claudecode"
)

func TestProtocol_DecodePre(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want hook.Call
		code contract.Code // "" when it decodes
	}{
		{name: "bash with the documented fields and one Claude Code added later",
			in:   `{"session_id":"s","transcript_path":"/t","cwd":"/repo","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"toolu_1","agent_id":"new-field"}`,
			want: hook.Call{Session: "s", CallID: "toolu_1", Tool: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`), Cwd: "/repo", Command: "go test ./..."}},
		{name: "edit names its file",
			in:   `{"session_id":"s","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/repo/docs/a.md","old_string":"a","new_string":"b"},"tool_use_id":"toolu_2"}`,
			want: hook.Call{Session: "s", CallID: "toolu_2", Tool: "Edit", Input: json.RawMessage(`{"file_path":"/repo/docs/a.md","old_string":"a","new_string":"b"}`), Cwd: "/repo", File: "/repo/docs/a.md"}},
		{name: "notebook edit names its notebook",
			in:   `{"cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"n.ipynb","new_source":"x"},"tool_use_id":"t"}`,
			want: hook.Call{CallID: "t", Tool: "NotebookEdit", Input: json.RawMessage(`{"notebook_path":"n.ipynb","new_source":"x"}`), Cwd: "/repo", File: "n.ipynb"}},
		{name: "grep names where it searches",
			in:   `{"cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"root","path":"/etc"},"tool_use_id":"t"}`,
			want: hook.Call{CallID: "t", Tool: "Grep", Input: json.RawMessage(`{"pattern":"root","path":"/etc"}`), Cwd: "/repo", File: "/etc"}},
		{name: "glob without a path searches the working directory",
			in:   `{"cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Glob","tool_input":{"pattern":"**/*.go"},"tool_use_id":"t"}`,
			want: hook.Call{CallID: "t", Tool: "Glob", Input: json.RawMessage(`{"pattern":"**/*.go"}`), Cwd: "/repo", File: "."}},
		{name: "grep whose path is not a string", in: `{"hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"x","path":7},"tool_use_id":"t"}`, code: contract.CodeInvalidArgument},
		{name: "another tool carries only its input",
			in:   `{"cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"WebFetch","tool_input":{"url":"https://example.org"},"tool_use_id":"t"}`,
			want: hook.Call{CallID: "t", Tool: "WebFetch", Input: json.RawMessage(`{"url":"https://example.org"}`), Cwd: "/repo"}},
		{name: "a key given twice", in: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_name":"Read","tool_input":{"command":"ls"},"tool_use_id":"t"}`, code: contract.CodeDuplicateKey},
		{name: "a documented key in another case", in: `{"hook_event_name":"PreToolUse","Tool_Name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`, code: contract.CodeCaseVariantKey},
		{name: "a field of the wrong type", in: `{"hook_event_name":"PreToolUse","tool_name":7,"tool_input":{},"tool_use_id":"t"}`, code: contract.CodeInvalidArgument},
		{name: "another event", in: `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`, code: contract.CodeInvalidArgument},
		{name: "no tool_use_id", in: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, code: contract.CodeInvalidArgument},
		{name: "bash without a command", in: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":""},"tool_use_id":"t"}`, code: contract.CodeInvalidArgument},
		{name: "edit whose path is not a string", in: `{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":["a"]},"tool_use_id":"t"}`, code: contract.CodeInvalidArgument},
		{name: "tool_input not an object", in: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls","tool_use_id":"t"}`, code: contract.CodeInvalidArgument},
		{name: "two values", in: `{"hook_event_name":"PreToolUse"} {}`, code: contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudecode.Protocol{}.DecodePre([]byte(tt.in))
			if tt.code != "" {
				if contract.CodeOf(err) != tt.code {
					t.Fatalf("err = %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProtocol_DecodePost(t *testing.T) {
	t.Parallel()
	zero := int64(0)
	tests := []struct {
		name string
		in   string
		want hook.Ran
	}{
		{name: "a bash run", in: `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t","tool_response":{"stdout":"a","stderr":"","interrupted":false,"exitCode":0}}`,
			want: hook.Ran{CallID: "t", Tool: "Bash", OK: true, ExitCode: &zero, Response: []byte(`{"stdout":"a","stderr":"","interrupted":false,"exitCode":0}`)}},
		{name: "an interrupted run", in: `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"sleep 9"},"tool_use_id":"t","tool_response":{"interrupted":true}}`,
			want: hook.Ran{CallID: "t", Tool: "Bash", OK: true, Interrupted: true, Response: []byte(`{"interrupted":true}`)}},
		{name: "a failure", in: `{"hook_event_name":"PostToolUseFailure","tool_name":"Edit","tool_input":{"file_path":"/a"},"tool_use_id":"t","error":"String not found","is_interrupt":false}`,
			want: hook.Ran{CallID: "t", Tool: "Edit", Response: []byte("String not found")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudecode.Protocol{}.DecodePost([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ran (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProtocol_Verdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		allow  bool
		reason string
		want   string
	}{
		{"allow", true, "", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"allowed by Docket"}}`},
		{"deny with the reason", false, "no", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudecode.Protocol{}.Verdict(tt.allow, tt.reason)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzDecodePre: no input makes the decoder panic, and what decodes names a tool and a
// call id.
func FuzzDecodePre(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := claudecode.Protocol{}.DecodePre(b)
		if err == nil && (c.Tool == "" || c.CallID == "") {
			t.Errorf("%q decoded to a call without a tool or id: %+v", b, c)
		}
	})
}
