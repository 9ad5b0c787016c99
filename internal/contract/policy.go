package contract

import "time"

// PolicyKind names what a policy governs (issue 14).
type PolicyKind string

// Policy kinds.
const (
	PolicyDelegation PolicyKind = "delegation" // which requests an orchestrator may decide
	PolicyAutonomy   PolicyKind = "autonomy"   // when an Agent's writes are admitted
	PolicyRecovery   PolicyKind = "recovery"   // what may be retried or re-queued without a person
)

// PolicyKinds lists every kind, in the order listings show them.
var PolicyKinds = []PolicyKind{PolicyDelegation, PolicyAutonomy, PolicyRecovery}

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
