package contract

import (
	"encoding/json"
	"time"
)

// Error codes of the gateway and its Operations.
const (
	CodeNoSuchTool                Code = "no_such_tool"                // an MCP tool other than the six
	CodeOperationRunning          Code = "operation_running"           // a write while an Operation is unresolved
	CodePreviousResultUndelivered Code = "previous_result_undelivered" // a write before the last outcome was seen
	CodeArtifactNotFound          Code = "artifact_not_found"          // a ReadArtifact ref the authority did not issue
	CodeDigestMismatch            Code = "digest_mismatch"             // a decision names another digest than the request's
	CodeSelfDecision              Code = "self_decision"               // a principal deciding its own request
	CodeRequestClosed             Code = "request_closed"              // a decision on a decided, void or expired request
	CodeCallChanged               Code = "call_changed"                // an approved call no longer evaluates to the request
	CodeOperationLimit            Code = "operation_limit"             // a write past the Agent's bound of writes per minute
)

// OperationState is where an Operation stands.
type OperationState string

// Operation states.
const (
	OpRunning            OperationState = "running"
	OpWaitingForDecision OperationState = "waiting_for_decision"
	OpDone               OperationState = "done"
	OpFailed             OperationState = "failed"
	OpRefused            OperationState = "refused"
	OpNeedsPerson        OperationState = "needs_person"
	OpUnknown            OperationState = "unknown"
)

// Settled reports whether s is final: done, failed, refused or unknown.
func (s OperationState) Settled() bool {
	return s == OpDone || s == OpFailed || s == OpRefused || s == OpUnknown
}

// OperationStage says where a running Operation is.
type OperationStage string

// Stages of a running Operation.
const (
	StageNotDispatched OperationStage = "not_dispatched"
	StageAtWorker      OperationStage = "at_worker"
)

// OperationEntry is one entry of the strip every tool result carries.
// Label is built only from the call's own input. Result is the outcome in full while it
// is unacknowledged; afterwards Summary replaces it.
type OperationEntry struct {
	Tool     string         `json:"tool"`
	Label    string         `json:"label"`
	State    OperationState `json:"state"`
	At       time.Time      `json:"at"`    // when the call was admitted
	Since    time.Time      `json:"since"` // when it entered State
	Stage    OperationStage `json:"stage,omitempty"`
	Decision string         `json:"decision,omitempty"` // the Request id while waiting, or the verdict
	Reason   string         `json:"reason,omitempty"`
	// ReasonCode says Reason in a word a client can branch on: why the work waits while
	// running and not_dispatched (no_tool_locked, no_source_bound, source_ambiguous,
	// no_live_worker, tool_not_advertised), worker_refused when a worker refused it,
	// worker_lost when it needs a person because its worker went away, else the code the
	// call was refused or failed with.
	ReasonCode Code            `json:"reasonCode,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Summary    string          `json:"summary,omitempty"`
}

// OperationSlot is the state form of a strip entry, with its host-only ordinal.
type OperationSlot struct {
	Ordinal int64 `json:"ordinal"`
	OperationEntry
}

// MaxStrip is the most entries a strip holds: the latest five, any unresolved, the latest
// settled write.
const MaxStrip = 7
