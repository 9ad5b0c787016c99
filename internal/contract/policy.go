package contract

import "time"

// PolicyKind names what a policy governs.
type PolicyKind string

// Policy kinds.
const (
	PolicyDelegation PolicyKind = "delegation" // which requests an orchestrator may decide
	PolicyAutonomy   PolicyKind = "autonomy"   // when an Agent's writes are admitted
	PolicyRecovery   PolicyKind = "recovery"   // what may be retried or re-queued without a person
	PolicyDelegate   PolicyKind = "delegate"   // which consent operations a delegate runs without a card
	PolicyHook       PolicyKind = "hook"       // which coding-agent tool calls run freely, need a decision, or are refused
	PolicyArtifact   PolicyKind = "artifact"   // how long the artifacts Agents keep can be read
)

// PolicyKinds lists every kind, in the order listings show them.
var PolicyKinds = []PolicyKind{PolicyDelegation, PolicyAutonomy, PolicyRecovery, PolicyDelegate, PolicyHook, PolicyArtifact}

// Policy error codes.
const (
	CodePolicyInvalid Code = "policy_invalid" // a policy document that does not parse or check; the teaching names file:line
)

// PolicyVersion is one version of a project's policy of a kind: version 1 is built in,
// and each publication by a member is the next. Digest is sha256 over Text, the document
// as published.
type PolicyVersion struct {
	Kind        PolicyKind `json:"kind"`
	Version     int64      `json:"version"`
	Digest      string     `json:"digest"`
	Builtin     bool       `json:"builtin,omitempty"`
	PublishedBy Principal  `json:"publishedBy,omitempty"`
	// Publisher is the publishing member's name (for a delegate, "member/delegate"), read
	// when the version is listed or shown; the log records PublishedBy.
	Publisher   string     `json:"publisher,omitempty"`
	PublishedAt *time.Time `json:"publishedAt,omitempty"`
	File        string     `json:"file,omitempty"` // the name it was published from
	Text        string     `json:"text,omitempty"` // omitted from listings
}

// PublishPolicyRequest is what docket policy publish sends: the document and the name of
// the file it came from, for the lines a refusal names.
type PublishPolicyRequest struct {
	File string `json:"file"`
	Text string `json:"text"`
}

// PolicyDiff is the line difference between two versions of a kind: each line of Diff is
// "  " (in both), "- " (only in From) or "+ " (only in To), then the line.
type PolicyDiff struct {
	Kind PolicyKind `json:"kind"`
	From int64      `json:"from"`
	To   int64      `json:"to"`
	Diff string     `json:"diff"`
}

// ActionDecide is the built-in Action through which an orchestrator decides a request a
// class of the delegation policy in force lets it decide: ApplyAction with params
// request (the id), digest (the digest it read in its View), verdict ("approve" or
// "deny") and an optional reason. It is listed in an orchestrator's View while it has a
// request to decide.
const ActionDecide = "docket.decide"

// CodePathNeedsMember is a worker's refusal of a call an orchestrator approved under a
// path class, whose landing path is not plainly inside its Source (a second hard link, a
// symbolic link, "..", an absolute path); the authority turns it into a request only a
// member decides.
const CodePathNeedsMember Code = "path_needs_member"

// CodeNotDelegated refuses an orchestrator's decision on a request no class of the
// delegation policy in force covers.
const CodeNotDelegated Code = "not_delegated"

// DecidableRequest is a pending request an orchestrator may decide, as its View shows it:
// the canonical vector and its digest, never prose an agent wrote.
type DecidableRequest struct {
	ID          RequestID     `json:"id"`
	RequestedBy Principal     `json:"requestedBy"`
	Vector      RequestVector `json:"vector"`
	Digest      string        `json:"digest"`
	Deadline    time.Time     `json:"deadline"`
	Class       string        `json:"class"`         // the delegation class that covers it
	Policy      int64         `json:"policyVersion"` // the delegation policy version in force
	// TaskBy names who wrote the tasks of the conversation whose call raised the request
	// ([Request.TaskBy]); empty when the call came from no task.
	TaskBy []Principal `json:"taskBy,omitempty"`
}

// Autonomy refusals and their codes.
const (
	CodeOutsideRunWindow       Code = "outside_run_window"       // an attended Agent's write outside a run window a member opened
	CodeAutonomyManual         Code = "autonomy_manual"          // a manual Agent's write: a person makes every write
	CodeDailyBound             Code = "daily_bound"              // the Agent reached the autonomy policy's writes per day
	CodeAcknowledgementMissing Code = "acknowledgement_required" // raising to unattended needs the stated risk acknowledged
)

// Autonomy is an Agent's level and run windows, as a member reads them.
type Autonomy struct {
	Agent   AgentID     `json:"agent"`
	Level   string      `json:"level"` // manual, attended or unattended
	Windows []RunWindow `json:"windows"`
	Policy  int64       `json:"policyVersion"` // the autonomy policy version in force
	// Acknowledgement is the stated risk a member acknowledges before raising the Agent
	// to unattended, when the policy in force requires it; "" when it does not.
	Acknowledgement string `json:"acknowledgement,omitempty"`
	// Because says why Level is attended though a member set the Agent unattended: the
	// policy's stated risk changed since a member acknowledged it. "" otherwise.
	Because string `json:"because,omitempty"`
}

// RunWindow is a span in which an attended Agent's writes are admitted.
type RunWindow struct {
	From     time.Time `json:"from"`
	Until    time.Time `json:"until"`
	OpenedBy Principal `json:"openedBy"`
}

// SetLevelRequest sets an Agent's autonomy level. Raising it to unattended under a policy
// that requires it carries the policy's acknowledgement text, read and acknowledged.
type SetLevelRequest struct {
	Level           string `json:"level"`
	Acknowledgement string `json:"acknowledgement,omitempty"`
	// Because says why Level is attended though a member set the Agent unattended: the
	// policy's stated risk changed since a member acknowledged it. "" otherwise.
	Because string `json:"because,omitempty"`
}

// OpenWindowRequest opens a run window of Minutes from now (1 to 1440).
type OpenWindowRequest struct {
	Minutes int64 `json:"minutes"`
}

// ActionRetry is the built-in Action by which an orchestrator retries a failed Operation
// (or re-queues work a worker refused) under the recovery policy in force: ApplyAction
// with params operation ("<agent>.<ordinal>", as the strip of that Agent names it in
// docket ops) and reason. An act outside the policy raises a recovery request that only
// a member decides.
const ActionRetry = "docket.retry"

// Recovery codes.
const (
	CodeNotRetryable Code = "not_retryable" // the Operation is not a known failure of an executed Action, or moved on
)

// RetryRequest is a member's retry of a failed Operation.
type RetryRequest struct {
	Reason string `json:"reason"`
}

// RecoveryOutcome is what a recovery act did: the Operation retried, as which new one, or
// the recovery request it raised instead.
type RecoveryOutcome struct {
	Act       string    `json:"act"` // "retry" or "requeue"
	Operation string    `json:"operation"`
	Retry     string    `json:"retry,omitempty"`   // the new Operation, "<agent>.<ordinal>"
	Request   RequestID `json:"request,omitempty"` // the recovery request raised instead
	Attempt   int64     `json:"attempt"`
	Policy    int64     `json:"policyVersion"`
}
