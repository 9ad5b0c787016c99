package contract

import (
	"encoding/json"
	"time"
)

// RequestID names a Request ("req_…").
type RequestID string

// RequestVector is what a Request's digest covers: the Action, its exact
// arguments after bindings, the target Case, the Tool contract and digest and the Source
// record. A reviewer reads these same fields; an agent's own words never enter them.
//
// A manual Agent's Board act (OpenCase, ApplyBatch or CloseCase) waits as a Request too
// : its vector names the call (Call), the project, the Agent and the call's
// canonical arguments (Input), with Action empty. The fields it adds are left out of an
// Action's vector, so an Action's digest is what it always was.
type RequestVector struct {
	Action     string `json:"action"`
	Args       Args   `json:"args"`
	CaseID     CaseID `json:"caseId,omitempty"`
	Tool       string `json:"tool,omitempty"`
	ToolDigest string `json:"toolDigest,omitempty"`
	Source     string `json:"source,omitempty"`
	// Call is the Board tool of a Board act: ToolOpenCase, ToolApplyBatch or
	// ToolCloseCase; "" for an Action's request.
	Call    string    `json:"call,omitempty"`
	Project ProjectID `json:"project,omitempty"` // a Board act's project
	Agent   AgentID   `json:"agent,omitempty"`   // the Agent whose Board act it is
	// Input is a Board act's arguments as the authority decoded them, re-encoded; the
	// digest is over their canonical form (RFC 8785), so key order does not count.
	Input json.RawMessage `json:"input,omitempty"`
}

// RequestState is where a Request stands.
type RequestState string

// Request states.
const (
	RequestPending  RequestState = "pending"
	RequestApproved RequestState = "approved"
	RequestDenied   RequestState = "denied"
	RequestExpired  RequestState = "expired"
	RequestVoid     RequestState = "void" // the call changed before it ran
)

// Request is a call that waits for a person's decision, bound to Digest,
// "sha256:" + hex(sha256(JCS(Vector))).
type Request struct {
	ID          RequestID     `json:"id"`
	Project     ProjectID     `json:"project"`
	Ordinal     int64         `json:"ordinal"` // the Operation of the requesting Agent
	RequestedBy Principal     `json:"requestedBy"`
	Vector      RequestVector `json:"vector"`
	Digest      string        `json:"digest"`
	State       RequestState  `json:"state"`
	CreatedAt   time.Time     `json:"createdAt"`
	Deadline    time.Time     `json:"deadline"`
	DecidedBy   Principal     `json:"decidedBy,omitempty"`
	DecidedAt   *time.Time    `json:"decidedAt,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	// Policy is the version of the delegation policy in force when the Request was
	// decided or closed; 0 while it is pending.
	Policy int64 `json:"policyVersion,omitempty"`
	// Recovery marks a recovery request: an act on another Agent's Operation
	// outside the recovery policy, which only a member decides.
	Recovery bool `json:"recovery,omitempty"`
	// MemberOnly, when set, says why only a member decides the Request: the
	// worker found that the path a delegated call lands on is not plainly inside its
	// Source. The store refuses an orchestrator's decision on it too.
	MemberOnly string `json:"memberOnly,omitempty"`
	// Delegated is the class of the delegation policy under which an orchestrator decided
	// the Request; nil when a member decided it, or while it is pending.
	Delegated *DelegatedBy `json:"delegated,omitempty"`
	// TaskBy names who posted the tasks and messages of the conversation whose call raised
	// the Request, in the order they were first posted: a member ("member:<id>"), a
	// member's delegate ("member:<name>/<delegate>") or an Agent. Empty for a call made in
	// no conversation of a task. A decider reads it to see whose words led to the call
	// (docs/delegates.md).
	TaskBy []Principal `json:"taskBy,omitempty"`
}

// DelegatedBy is the class of the delegation policy an orchestrator's decision rested on.
type DelegatedBy struct {
	Class string `json:"class"`
	// Path is the class's path glob when it is a path class: the worker then checks the
	// path the approved call lands on before it runs it ([Grant.PathCheck]).
	Path string `json:"path,omitempty"`
}

// Verdict is a decision's answer.
type Verdict string

// Verdicts.
const (
	VerdictApprove Verdict = "approve"
	VerdictDeny    Verdict = "deny"
)

// Decision is what a decider sends: the digest it read, its verdict and a reason.
type Decision struct {
	Digest  string  `json:"digest"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
}
