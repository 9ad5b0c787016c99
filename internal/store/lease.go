package store

import "time"

// Lease is the row that fences one Connection's worker instance: who
// holds it, under which generation, and until when. The row, not the event log, is what
// a hop call is checked against, so a renewal updates it without appending an event, and
// a transaction that locks it with [Tx.LockLease] is serialized with every other one
// that decides on the same lease — a takeover and a claim under the old generation
// cannot both commit.
//
// A Connection may hold several leases at once, one per worker instance, each in its own
// Slot (the key is Connection and Slot). Generations grow per Connection across all its
// slots, so a generation names one lease of the Connection.
type Lease struct {
	Project    string
	Connection string
	Slot       int // 0 for the first; slot 0 is the row every hop call locks first
	WorkerID   string
	Generation int64 // grows by one with every acquisition; never reused
	ExpiresAt  time.Time
}
