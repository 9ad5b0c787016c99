package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
)

// hold waits while the agent's Operation ordinal is running: until it settles, needs a
// decision or a person, or the hold bound passes. It finds the outcome
// through the store ([store.Store.Wait]), so an Operation settled by another instance
// ends the hold too. Reaching the bound is not an error and cancels nothing. When ctx
// ends first, hold returns its cause.
func (o *Operations) hold(ctx context.Context, project contract.ProjectID, agent string, ordinal int64, progress func(contract.OperationSlot)) error {
	bound, cancel := context.WithTimeout(ctx, o.holdBound)
	defer cancel()
	l := o.ledger(project)
	var told contract.OperationEntry
	for first := true; ; first = false {
		l.mu.Lock()
		var err error
		if !first { // admit has just caught the ledger up
			err = l.catchUpLocked(ctx, o.store, project)
		}
		var slot contract.OperationSlot
		if op := l.opLocked(agent, ordinal); op != nil {
			slot = contract.OperationSlot{Ordinal: ordinal, OperationEntry: op.entry()}
		}
		cursor := l.cursor.Seq()
		l.mu.Unlock()
		if err != nil {
			return err
		}
		if progress != nil && (slot.State != told.State || slot.Stage != told.Stage || slot.ReasonCode != told.ReasonCode) {
			progress(slot)
			told = slot.OperationEntry
		}
		if slot.State != contract.OpRunning {
			return nil
		}
		err = o.store.Wait(bound, string(project), cursor)
		switch {
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case errors.Is(err, context.DeadlineExceeded):
			return nil
		case err != nil:
			return fmt.Errorf("hold operation %d of %s: %w", ordinal, agent, err)
		}
	}
}

// Dispatch is an executed Action waiting for a worker: the agent's Operation and the
// request to run.
type Dispatch struct {
	Agent   string
	Ordinal int64
	Request contract.ExecutionRequest
	// Approved is the vector a person approved, for an Action that needed a decision:
	// when it names a ToolDigest or Source, the call must run at that digest against that
	// Source and nowhere else.
	Approved *contract.RequestVector
	// PathCheck names the argument whose path the worker checks before it runs the call
	// (contract.Grant.PathCheck): set when an orchestrator approved it under a path class.
	PathCheck string
}

// Queued returns project's Operations whose execution waits for a worker
// (running, not_dispatched), oldest first within each agent. It is the worker hop's
// queue; a worker claims one through the hop (package dispatch), and a report settles it.
func (o *Operations) Queued(ctx context.Context, project contract.ProjectID) ([]Dispatch, error) {
	l := o.ledger(project)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.catchUpLocked(ctx, o.store, project); err != nil {
		return nil, err
	}
	var out []Dispatch
	for _, a := range slices.Sorted(maps.Keys(l.ops)) {
		for _, op := range l.ops[a] {
			if op.state == contract.OpRunning && op.stage == contract.StageNotDispatched && op.execution != nil {
				q := Dispatch{Agent: a, Ordinal: op.ordinal, Request: *op.execution}
				if r := l.approvedRequestLocked(a, op.ordinal); r != nil {
					v := r.Vector
					q.Approved = &v
					if r.Delegated != nil && r.Delegated.Path != "" {
						q.PathCheck = policydoc.PathArg
					}
				}
				out = append(out, q)
			}
		}
	}
	return out, nil
}

// approvedRequestLocked returns the approved Request of the agent's Operation ordinal, or
// nil. An Operation has at most one: an approval voided at dispatch is void, not approved.
func (l *Ledger) approvedRequestLocked(agent string, ordinal int64) *contract.Request {
	for _, id := range l.order {
		r := l.requests[id]
		if r.State == contract.RequestApproved && r.Ordinal == ordinal && r.RequestedBy.ID() == agent && r.RequestedBy.Kind() == contract.PrincipalAgent {
			return r
		}
	}
	return nil
}

// ApplyOutcome applies an ok outcome to b: the Board change (nil when the rows change
// nothing) and the Operation done, or failed when the Board refuses the rows.
func ApplyOutcome(b *board.Board, op *Op, by board.Author, out contract.ExecutionOutcome, ev Event) (*boards.Change, Event) {
	res, err := b.ApplyOutcome(by, *op.execution, out)
	if err != nil {
		ev.State = contract.OpFailed
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(err)
		return nil, ev
	}
	ch := actionChange(&contract.ApplyActionInput{CaseID: op.execution.CaseID, Action: op.execution.Action, Params: op.execution.Args}, res)
	ch.Event = event.ActionCompleted
	if ev.Result, err = json.Marshal(map[string]any{"action": op.execution.Action, "rows": len(out.Rows), "changes": len(res.Changes)}); err != nil {
		ev.State = contract.OpFailed
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(fmt.Errorf("encode the outcome of %s: %w", op.execution.Action, err))
		return nil, ev
	}
	ev.State = contract.OpDone
	if len(res.Changes) == 0 && res.Case == nil {
		return nil, ev
	}
	return ch, ev
}
