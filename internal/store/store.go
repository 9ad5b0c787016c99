// Package store defines Docket's durable store: the Store contract, its records, the
// hash-chained event log and the sentinel errors that every implementation returns.
package store

import (
	"context"
	"errors"
)

// Sentinel errors returned by every implementation, wrapped with what was being done.
// Callers match them with [errors.Is].
var (
	// ErrNotFound: the record asked for, or one a write refers to, does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a write would break uniqueness (an id, a name, a digest already in use),
	// or would change a record that is immutable once written (a release, an event).
	ErrConflict = errors.New("store: conflict")
	// ErrRevoked: a credential lookup found a revoked session, agent or member.
	ErrRevoked = errors.New("store: revoked")
	// ErrExpired: a session lookup found a session past its expiry.
	ErrExpired = errors.New("store: expired")
	// ErrInvalid: the caller passed a record the store cannot keep (an empty id, an
	// event without a type, event data that is not JSON).
	ErrInvalid = errors.New("store: invalid record")
	// ErrNoEventData: an event's data is null, empty or not JSON. Every event says what
	// happened; null data is an encoding error someone dropped. It comes
	// wrapped together with [ErrInvalid].
	ErrNoEventData = errors.New("store: event data is not a JSON value other than null")
	// ErrChainBroken: [Store.Verify] found an event that does not match the hash chain.
	// The error is a *[ChainError] that names the first broken link.
	ErrChainBroken = errors.New("store: event chain broken")
	// ErrClosed: the Store was used after Close.
	ErrClosed = errors.New("store: closed")
)

// Store is Docket's durable state: identities, capability releases, Board nodes and the
// per-project event log. Implementations: internal/store/sqlite and
// internal/store/postgres, both held to internal/store/storetest.
//
// Writes happen only inside [Store.Update], so that every state change and the event that
// records it commit together. Reads ([Reader]) may be made on the Store, which sees
// committed state, or on a [Tx], which also sees the transaction's own writes.
//
// A Store is safe for concurrent use. Call Close once, when no call is in flight.
type Store interface {
	Reader

	// Update runs fn in one write transaction and commits it when fn returns nil. When fn
	// returns an error, or the commit fails, nothing fn wrote is kept: no row and no
	// event. Update returns fn's error unchanged, so callers can match their own errors.
	// Update never retries fn; fn must not keep tx after it returns. ctx ending before fn
	// runs makes Update return its error without running fn; once fn runs, its statements
	// no longer end with ctx (they share a transaction with other callers' Updates), so
	// a fn that must stop checks ctx itself and returns its error. Writers of one
	// project's log are serialized from their first Append to their commit; a transaction
	// that appends to several logs should reach them in a fixed (sorted) order, or
	// PostgreSQL may abort one of two crossing transactions as a deadlock.
	//
	// After a write of tx fails, fn must return an error: PostgreSQL aborts the whole
	// transaction at its first failed statement. (A read that returns [ErrNotFound] does not
	// fail the transaction.)
	Update(ctx context.Context, fn func(tx Tx) error) error

	// Verify recomputes the hash chain of project's event log from the first event, on one
	// snapshot, and returns its head. The first event that does not match, or a stored head
	// that is not the last event, returns a *[ChainError] (matching [ErrChainBroken]) with
	// the last intact head. An empty log verifies to the zero Head.
	Verify(ctx context.Context, project string) (Head, error)

	// Wait blocks until project's log holds an event with a sequence number above after,
	// or ctx ends (then it returns ctx's error). It wakes for events committed by this
	// Store at once and, on PostgreSQL, for those committed by other instances sharing the
	// database (LISTEN/NOTIFY with a polling fallback). It returns a sequence number
	// above after that the log holds committed: a head of the log it found while waiting
	// (the log may be past it already), so a caller can read the new events with
	// [Reader.Events] up to it without reading the head again.
	Wait(ctx context.Context, project string, after int64) (int64, error)

	// Close releases the database. Calls after Close return [ErrClosed].
	Close() error
}
