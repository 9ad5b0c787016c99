package store

import (
	"context"
	"time"
)

// Decision is the durable record of a decision on a Request (DESIGN.md §7.1). The store
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

// DecisionWriter is the part of a [Tx] that records decisions. Every Tx of the SQLite and
// PostgreSQL stores implements it; it is kept apart from Tx only until Tx is next edited.
type DecisionWriter interface {
	// RecordDecision records d; see [Decision] for the rules it enforces. A Decision
	// naming a missing project returns [ErrNotFound].
	RecordDecision(ctx context.Context, d Decision) error
}
