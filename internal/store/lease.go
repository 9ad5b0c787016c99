package store

import "time"

// Lease is the row that fences one Connection's worker instance: who
// holds it, under which generation, and until when. The row, not the event log, is what
// a hop call is checked against, so a renewal updates it without appending an event, and
// a transaction that locks it with [Tx.LockLease] is serialized with every other one
// that decides on the same lease — a takeover and a claim under the old generation
// cannot both commit.
type Lease struct {
	Project    string
	Connection string // the key: one lease per Connection
	WorkerID   string
	Generation int64 // grows by one with every acquisition; never reused
	ExpiresAt  time.Time
}
