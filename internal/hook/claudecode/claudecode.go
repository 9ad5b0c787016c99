// Package claudecode speaks Claude Code's hook protocol for package hook: the
// PreToolUse, PostToolUse and PostToolUseFailure JSON it sends on stdin, and the
// permission decision it reads on stdout.
package claudecode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/hook"
)

// Protocol is Claude Code's hook protocol. Its zero value is ready to use.
type Protocol struct{}

var _ hook.Protocol = Protocol{}

// Name is the coding agent as the authority records it.
func (Protocol) Name() string { return "claude-code" }

// The hook events this adapter reads.
const (
	EventPre         = "PreToolUse"
	EventPost        = "PostToolUse"
	EventPostFailure = "PostToolUseFailure"
)

// fileTools name the input field of each tool that reads or writes one file.
var fileTools = map[string]string{
	"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "Read": "file_path",
	"NotebookEdit": "notebook_path",
}

// searchTools name the input field of each tool that reads under a path it may leave
// out, which is then the working directory: the hook judges where it reads like a file
// tool's path, so a free Grep is free only inside the repository too.
var searchTools = map[string]string{"Grep": "path", "Glob": "path", "LS": "path"}

// shellTools are the tools whose input's command runs in a shell.
var shellTools = map[string]bool{"Bash": true}

// input is what Claude Code sends a tool hook. Claude Code documents that it may add
// fields, so a field it adds is ignored; a field below with the wrong type, a key given
// twice or in another letter case is refused.
type input struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	Cwd           string          `json:"cwd"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response"`
	Error         *string         `json:"error"`
	IsInterrupt   *bool           `json:"is_interrupt"`
}

// known are input's keys, spelled exactly.
var known = []string{"session_id", "hook_event_name", "cwd", "tool_name", "tool_input", "tool_use_id", "tool_response", "error", "is_interrupt"}

func decode(b []byte, events ...string) (input, error) {
	if err := contract.CheckJSON(b); err != nil {
		return input{}, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return input{}, contract.Errorf(contract.CodeInvalidArgument, "the hook input is not a JSON object: %v", err)
	}
	for k := range keys {
		for _, f := range known {
			if k != f && strings.EqualFold(k, f) {
				return input{}, contract.Errorf(contract.CodeCaseVariantKey, "the hook input has the key %q where Claude Code sends %q", k, f)
			}
		}
	}
	var in input
	if err := json.Unmarshal(b, &in); err != nil {
		return input{}, contract.Errorf(contract.CodeInvalidArgument, "the hook input has a field of the wrong type: %v", err)
	}
	ok := false
	for _, e := range events {
		ok = ok || in.HookEventName == e
	}
	switch {
	case !ok:
		return input{}, contract.Errorf(contract.CodeInvalidArgument, "the hook input is a %q event where %s was expected; install the hook with docket hook install", in.HookEventName, strings.Join(events, " or "))
	case in.ToolName == "" || in.ToolUseID == "":
		return input{}, contract.Errorf(contract.CodeInvalidArgument, "the hook input has no tool_name or tool_use_id")
	case len(in.ToolInput) == 0 || in.ToolInput[0] != '{':
		return input{}, contract.Errorf(contract.CodeInvalidArgument, "the hook input's tool_input is not a JSON object")
	}
	return in, nil
}

// DecodePre reads a PreToolUse input: the tool, its input, and for a file tool its path
// and for Bash its command.
func (Protocol) DecodePre(b []byte) (hook.Call, error) {
	in, err := decode(b, EventPre)
	if err != nil {
		return hook.Call{}, err
	}
	c := hook.Call{Session: in.SessionID, CallID: in.ToolUseID, Tool: in.ToolName, Input: in.ToolInput, Cwd: in.Cwd}
	field, file := fileTools[in.ToolName]
	search, searches := searchTools[in.ToolName]
	if !file && !searches && !shellTools[in.ToolName] {
		return c, nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(in.ToolInput, &args); err != nil {
		return hook.Call{}, contract.Errorf(contract.CodeInvalidArgument, "the tool_input of %s does not decode: %v", in.ToolName, err)
	}
	if searches {
		c.File = "."
		if raw, ok := args[search]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &c.File); err != nil || c.File == "" {
				return hook.Call{}, contract.Errorf(contract.CodeInvalidArgument, "the tool_input of %s has a %s that is not a path", in.ToolName, search)
			}
		}
		return c, nil
	}
	name := field
	if !file {
		name = "command"
	}
	var v string
	if err := json.Unmarshal(args[name], &v); err != nil || v == "" {
		return hook.Call{}, contract.Errorf(contract.CodeInvalidArgument, "the tool_input of %s has no string %s", in.ToolName, name)
	}
	if file {
		c.File = v
	} else {
		c.Command = v
	}
	return c, nil
}

// DecodePost reads a PostToolUse or PostToolUseFailure input: whether the call
// succeeded, an exit code where the response gives one, and the response itself.
func (Protocol) DecodePost(b []byte) (hook.Ran, error) {
	in, err := decode(b, EventPost, EventPostFailure)
	if err != nil {
		return hook.Ran{}, err
	}
	r := hook.Ran{CallID: in.ToolUseID, Tool: in.ToolName, OK: in.HookEventName == EventPost, Response: in.ToolResponse}
	if in.Error != nil {
		r.Response = []byte(*in.Error)
	}
	if in.IsInterrupt != nil {
		r.Interrupted = *in.IsInterrupt
	}
	var resp struct {
		Interrupted *bool  `json:"interrupted"`
		ExitCode    *int64 `json:"exitCode"`
	}
	if len(in.ToolResponse) > 0 && in.ToolResponse[0] == '{' && json.Unmarshal(in.ToolResponse, &resp) == nil {
		r.ExitCode = resp.ExitCode
		if resp.Interrupted != nil {
			r.Interrupted = r.Interrupted || *resp.Interrupted
		}
	}
	return r, nil
}

// output is the documented hook output of a PreToolUse decision.
type output struct {
	HookSpecificOutput preOutput `json:"hookSpecificOutput"`
}

type preOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// Verdict is the PreToolUse output: allow, or deny with the reason Claude Code shows the
// model.
func (Protocol) Verdict(allow bool, reason string) ([]byte, error) {
	o := output{HookSpecificOutput: preOutput{HookEventName: EventPre, PermissionDecision: "deny", PermissionDecisionReason: reason}}
	if allow {
		o.HookSpecificOutput.PermissionDecision = "allow"
		o.HookSpecificOutput.PermissionDecisionReason = "allowed by Docket"
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode the hook's decision: %w", err)
	}
	return b, nil
}
