package store

import "time"

// Request is the durable record of a Request a decision may reference, written by
// [Tx.RecordRequest] in the transaction that raises it: what it is bound to and who made
// it, so the store can hold a decision to them.
type Request struct {
	Project     string
	ID          string // "req_…"
	Digest      string // the digest the Request is bound to, "sha256:…"
	RequestedBy string // the principal that made it
	At          time.Time
	// MemberOnly marks a Request only a member decides: a decision on it by an
	// orchestrator returns [ErrInvalid].
	MemberOnly bool
}

// Decision is the durable record of a decision on a Request, written by
// [Tx.RecordDecision]. The store holds these rules whatever its caller checked:
//   - the decider is a member of the Request's project ("member:<id>", not revoked) or
//     an orchestrator Agent of it ("agent:<id>" of kind orchestrator, not revoked); any
//     other or an empty decider returns [ErrInvalid], and so does an orchestrator on a
//     Request recorded MemberOnly;
//   - no principal decides its own request: a DecidedBy equal to RequestedBy returns
//     [ErrInvalid];
//   - the decision references a recorded Request with the same Digest and RequestedBy: a
//     missing Request, another digest or another requester returns [ErrNotFound];
//   - a request is decided once: a second Decision on it returns [ErrConflict].
type Decision struct {
	Project     string
	Request     string // the Request id, "req_…"
	Digest      string // the digest the decider read, "sha256:…"
	RequestedBy string // the principal that made the request
	DecidedBy   string // the principal that decided it
	Verdict     string // "approve" or "deny"
	At          time.Time
}
