package operation

import (
	"context"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// The worker hop (package dispatch) reads and moves the Operations it serves through
// the surface below: it takes a project's [Ledger] in the lock order, catches it up inside
// its own transaction, reads an [Op] and appends the [Event] that moves it.

// Ledger returns project's operation ledger, the projection of its operation, request
// and artifact events.
func (o *Operations) Ledger(project contract.ProjectID) *Ledger { return o.ledger(project) }

// Lock takes the ledger's lock; the lock order is in the authority's package doc.
func (l *Ledger) Lock() { l.mu.Lock() }

// Unlock releases the ledger's lock.
func (l *Ledger) Unlock() { l.mu.Unlock() }

// CatchUp applies project's events after the ledger's cursor, read from r (the store, or
// a transaction that sees its own writes). The lock must be held.
func (l *Ledger) CatchUp(ctx context.Context, r store.Reader, project contract.ProjectID) error {
	return l.catchUpLocked(ctx, r, project)
}

// CatchUpTo is [Ledger.CatchUp] to at least the head to, which the caller read, locked
// or left with its own commit: it reads no head.
func (l *Ledger) CatchUpTo(ctx context.Context, r store.Reader, project contract.ProjectID, to int64) error {
	return l.catchUpToLocked(ctx, r, project, to)
}

// Op returns the agent's Operation ordinal, or nil. The lock must be held while the Op
// is read.
func (l *Ledger) Op(agent string, ordinal int64) *Op { return l.opLocked(agent, ordinal) }

// Ordinal is the Operation's place among its agent's Operations, from 1.
func (op *Op) Ordinal() int64 { return op.ordinal }

// State is the Operation's state.
func (op *Op) State() contract.OperationState { return op.state }

// Stage is where a running Operation is.
func (op *Op) Stage() contract.OperationStage { return op.stage }

// Waiting returns why the Operation's queued work waits, as its last [event.OpWaiting]
// event said: a reasonCode and a reason, both "" when nothing was said or a later state
// replaced it.
func (op *Op) Waiting() (contract.Code, string) {
	if op.state != contract.OpRunning || op.stage != contract.StageNotDispatched {
		return "", ""
	}
	return op.reasonCode, op.reason
}

// Execution is the call an executed Action queued for a worker, or nil.
func (op *Op) Execution() *contract.ExecutionRequest { return op.execution }

// Entry returns the Operation as its strip entry.
func (op *Op) Entry() contract.OperationEntry { return op.entry() }
