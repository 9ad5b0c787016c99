package contract

import "time"

// Error codes of Tool locks and direct Actions (docs/workers.md, "Direct Actions").
const (
	// CodeToolUnlocked: the Tool a request or a queued call names was unlocked since, so
	// the request is void and the call is not served.
	CodeToolUnlocked Code = "tool_unlocked"
	// CodeToolLockDigest: a lock names a digest other than the one the Connection's
	// worker advertises for the Tool now.
	CodeToolLockDigest Code = "tool_lock_digest"
	// CodeToolNotLocked: an unlock or an approval names a Tool not locked on the
	// Connection.
	CodeToolNotLocked Code = "tool_not_locked"
)

// Approvals a Tool's direct Action may need besides a delegation class name; the words
// of a capability Action's approval.
const (
	ApprovalNone   = "none"
	ApprovalPerson = "person"
)

// DirectRelease is the id of the built-in release that holds the direct Actions of a
// project's locked Tools; its version is "1.0.0" and its digest moves with every lock,
// unlock and approval change.
const DirectRelease = "docket.tools"

// ToolApprovalRequest is the body of PUT …/connections/{c}/tools/{tool}/approval: what
// the Tool's direct Action needs from now on, none, person or a delegation class.
type ToolApprovalRequest struct {
	Approval string `json:"approval"`
}

// ConnectionTools is the inventory of one Connection (GET …/connections/{c}/inventory):
// every Tool its worker advertises or that is locked on it, and its bound Sources.
type ConnectionTools struct {
	Connection Connection `json:"connection"`
	// Worker is the worker whose last poll this serve received; nil when none polled.
	Worker  *ToolWorker   `json:"worker,omitempty"`
	Tools   []ToolEntry   `json:"tools"`   // by Tool id
	Sources []SourceEntry `json:"sources"` // by name
}

// ToolWorker is the worker a Connection's inventory was read from.
type ToolWorker struct {
	WorkerID   string    `json:"workerId"`
	Generation int64     `json:"workerGeneration"`
	Live       bool      `json:"live"` // it holds the Connection's lease now
	PolledAt   time.Time `json:"polledAt"`
}

// ToolEntry is one Tool of a Connection's inventory.
type ToolEntry struct {
	Tool string `json:"tool"`
	// Advertised is what the worker offers now; nil when it does not offer the Tool.
	Advertised *ToolDescriptor `json:"advertised,omitempty"`
	Lock       *ToolLock       `json:"lock,omitempty"` // nil when the Tool is not locked here
	// Action is the name of the direct Action the locked Tool is offered as, "" when it
	// is offered as none (not locked, or locked with no stated params).
	Action string `json:"action,omitempty"`
	// Stale is set when the Tool is locked at a digest other than the one advertised:
	// the worker will not run it until it is locked again.
	Stale bool `json:"stale,omitempty"`
}

// SourceEntry is a Source bound on a Connection, with whether the worker's vault holds
// it: nil when no worker reported its vault to this serve.
type SourceEntry struct {
	Source
	InVault *bool `json:"inVault,omitempty"`
}
