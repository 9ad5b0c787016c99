package contract

import "time"

// RequestID names a Request ("req_…").
type RequestID string

// RequestVector is what a Request's digest covers: the Action, its exact
// arguments after bindings, the target Case, the Tool contract and digest and the Source
// record. A reviewer reads these same fields; an agent's own words never enter them.
type RequestVector struct {
	Action     string `json:"action"`
	Args       Args   `json:"args"`
	CaseID     CaseID `json:"caseId,omitempty"`
	Tool       string `json:"tool,omitempty"`
	ToolDigest string `json:"toolDigest,omitempty"`
	Source     string `json:"source,omitempty"`
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
	// decided or closed (issue 14); 0 while it is pending.
	Policy int64 `json:"policyVersion,omitempty"`
	// Recovery marks a recovery request (issue 14): an act on another Agent's Operation
	// outside the recovery policy, which only a member decides.
	Recovery bool `json:"recovery,omitempty"`
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
