package contract

import (
	"encoding/json"
	"time"
)

// ActionHook is the Action every request vector of a coding agent's tool call names
// (docs/coding-agents.md): its Tool is the coding agent's tool ("Bash", "Edit"), its args
// the tool's canonical input ("input") and, by the kind of tool, the landing path
// ("path") or the command ("command") that a [delegation_policy] class reads.
const ActionHook = "docket.hook"

// Hook profile modes: what a coding agent's call of a tool comes to.
const (
	HookFree   = "free"   // it runs and is recorded
	HookDecide = "decide" // it runs only once a member, or an orchestrator a class covers, approves it
	HookRefuse = "refuse" // it never runs
)

// Error codes of the hook (docs/coding-agents.md).
const (
	CodeHookProfileRefuses Code = "hook_profile_refuses" // the hook policy in force refuses this tool to the Agent
	CodeHookDenied         Code = "hook_denied"          // a decider denied the call
	CodeHookUndecided      Code = "hook_undecided"       // no decision came within the hook's bound
	CodeHookUnknownCall    Code = "hook_unknown_call"    // an outcome names a call the authority never admitted
	CodeHookProtected      Code = "hook_protected"       // the call lands on the hook's own files, the repository's git config or a credential
	CodeHookLimit          Code = "hook_limit"           // the Agent has the most hook calls waiting it may, or reported the most it may in a minute
)

// MaxHookInput bounds a tool call's input in bytes, as a hook sends it.
const MaxHookInput = 256 << 10

// MaxHookWait bounds how long one hook call waits for a decision.
const MaxHookWait = 30 * time.Minute

// HookCall is one tool call of a coding agent, as its hook reports it before the call
// runs. Path and Command are what the hook read from the input for the kind of tool; the
// authority binds the decision to the tool, the input in canonical form (RFC 8785) and
// the path, so a path that resolves elsewhere later is another call.
type HookCall struct {
	CLI     string          `json:"cli"`               // the coding agent: "claude-code"
	Session string          `json:"session,omitempty"` // the coding agent's session id
	CallID  string          `json:"callId"`            // the coding agent's id of the tool call
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input"`
	// Path is where a file tool lands, resolved through every link: relative to the
	// repository root when inside it, else absolute (then no class covers it).
	Path    string `json:"path,omitempty"`
	Command string `json:"command,omitempty"` // a shell tool's command
	// PathNeedsMember says why the path does not land plainly inside the repository —
	// outside it, or, as written, through a ".." segment, a symbolic link or onto a file
	// with a second hard link — and "" when it does. No orchestrator's class covers such a
	// call, and a tool the hook policy marks free waits for a member instead.
	PathNeedsMember string `json:"pathNeedsMember,omitempty"`
	// Protected says which of the hook's protected paths the call lands on (its token
	// file, its config directory, the coding agent's settings that hold the hook, the
	// repository's .git/config, a credential's name); the authority refuses the call
	// with CodeHookProtected whatever the hook policy says.
	Protected string `json:"protected,omitempty"`
	// WaitMillis is how long the call waits for a decision before it is denied; 0 is
	// not at all, at most MaxHookWait.
	WaitMillis int64 `json:"waitMs,omitempty"`
}

// HookVerdict is the authority's answer to a [HookCall]: whether it may run, and why.
type HookVerdict struct {
	Ordinal   int64     `json:"ordinal"` // the Agent's Operation that records the call
	Allow     bool      `json:"allow"`
	Mode      string    `json:"mode"` // HookFree, HookDecide or HookRefuse, from the hook policy in force
	Digest    string    `json:"digest"`
	Request   RequestID `json:"request,omitempty"`
	DecidedBy Principal `json:"decidedBy,omitempty"`
	ErrorCode Code      `json:"errorCode,omitempty"`
	Reason    string    `json:"reason,omitempty"` // for a denial: a sentence the coding agent reads
}

// HookOutcome is what a call that ran came to, as its hook reports it after: never the
// output itself, only its digest and size, so no secret it printed reaches the log.
type HookOutcome struct {
	CallID       string `json:"callId"`
	Tool         string `json:"tool"`
	OK           bool   `json:"ok"`
	ExitCode     *int64 `json:"exitCode,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	OutputDigest string `json:"outputDigest"` // sha256 of the first MaxHookOutput bytes of the tool's response
	OutputBytes  int64  `json:"outputBytes"`  // the response's whole size
	Truncated    bool   `json:"truncated,omitempty"`
	// Withdrawn, when set, says why the hook did not run a call that was allowed (its
	// path landed elsewhere by then); the call has then no output, and its Operation is
	// recorded refused.
	Withdrawn string `json:"withdrawn,omitempty"`
}

// MaxHookOutput bounds the bytes of a tool's response a hook digests.
const MaxHookOutput = 1 << 20

// HookCallEntry is one coding-agent call as the console and the CLI list it.
type HookCallEntry struct {
	Ordinal    int64          `json:"ordinal"`
	At         time.Time      `json:"at"`
	Tool       string         `json:"tool"`
	Path       string         `json:"path,omitempty"`
	Command    string         `json:"command,omitempty"`
	Mode       string         `json:"mode"`
	HookPolicy int64          `json:"hookPolicy"` // the version of the hook policy in force that gave the mode
	State      OperationState `json:"state"`
	Digest     string         `json:"digest"`
	Request    RequestID      `json:"request,omitempty"`
	Decision   string         `json:"decision"` // free, approved, denied, refused, expired or pending
	DecidedBy  Principal      `json:"decidedBy,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	ErrorCode  Code           `json:"errorCode,omitempty"` // the code the call was refused with: hook_undecided, hook_protected, …
	// PathNeedsMember and Protected are what the hook found where the path lands
	// ([HookCall]).
	PathNeedsMember string       `json:"pathNeedsMember,omitempty"`
	Protected       string       `json:"protected,omitempty"`
	Outcome         *HookOutcome `json:"outcome,omitempty"`
}
