package store

import "time"

// Decision is the durable record of a decision on a Request, written by
// [Tx.RecordDecision]. The store
// holds two rules whatever its caller checked: no principal decides its own request (a
// Decision whose DecidedBy equals its RequestedBy returns [ErrInvalid]), and a request is
// decided once (a second Decision on it returns [ErrConflict]).
type Decision struct {
	Project     string
	Request     string // the Request id, "req_…"
	Digest      string // the digest the decider read, "sha256:…"
	RequestedBy string // the principal that made the request
	DecidedBy   string // the principal that decided it
	Verdict     string // "approve" or "deny"
	At          time.Time
}
