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
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// hold waits while the agent's Operation ordinal is running: until it settles, needs a
// decision or a person, or the hold bound passes (DESIGN.md §6.3). It finds the outcome
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
		if progress != nil && (slot.State != told.State || slot.Stage != told.Stage) {
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

// Settle applies a worker's outcome to the agent's running Operation ordinal: the Board
// takes the returned rows and effects (as by, the Tool with its Source's tier and words)
// and the Operation settles done, or failed with the reason. A held call waiting on it,
// on any instance, answers then. The outcome is applied as a worker's report applies it
// (dispatch.Dispatcher.Report), without the hop's lease, claim and grant: it is the in-process
// path for tests of what sits above the authority.
func (o *Operations) Settle(ctx context.Context, project contract.ProjectID, agent string, ordinal int64, by board.Author, out contract.ExecutionOutcome) error {
	return o.change(ctx, project, agent, ordinal, contract.PrincipalTool, func(b *board.Board, op *Op) (*boards.Change, Event, error) {
		if op.state != contract.OpRunning || op.execution == nil {
			return nil, Event{}, contract.Errorf(contract.CodeOutcomeMismatch, "operation %d of %s is %s; it awaits no outcome", ordinal, agent, op.state)
		}
		if !out.OK {
			res, _ := json.Marshal(map[string]any{"ok": false, "reason": out.Reason})
			return nil, Event{State: contract.OpFailed, Reason: out.Reason, Result: res}, nil
		}
		ch, ev := ApplyOutcome(b, op, by, out, Event{})
		return ch, ev, nil
	})
}

// change moves the agent's Operation ordinal to the state fn returns, with fn's Board
// change, in one transaction under the project's lock. fn changes nothing but the Board,
// so the write sequence may run it again on a rebuilt Board.
func (o *Operations) change(ctx context.Context, project contract.ProjectID, agent string, ordinal int64, actorKind contract.PrincipalKind,
	fn func(b *board.Board, op *Op) (*boards.Change, Event, error)) error {
	what := fmt.Sprintf("change operation %d of %s", ordinal, agent)
	return o.boards.Write(ctx, project, what, func(w *boards.Write) error {
		l := o.ledger(project)
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := l.catchUpLocked(ctx, o.store, project); err != nil {
			return err
		}
		op := l.opLocked(agent, ordinal)
		if op == nil {
			return contract.Errorf(contract.CodeNotFound, "agent %s has no operation %d", agent, ordinal)
		}
		ch, ev, err := fn(w.Board(), op)
		if err != nil {
			return err
		}
		ev.Agent, ev.Ordinal = agent, ordinal
		actor := contract.NewPrincipal(actorKind, agent)
		if actorKind == contract.PrincipalTool && op.execution != nil {
			actor = contract.NewPrincipal(contract.PrincipalTool, op.execution.Tool)
		}
		now := o.nowUTC()
		err = w.Commit(ctx, ch, actor, now, "operation", nil, func(tx store.Tx) error {
			return eventlog.Append(ctx, tx, project, event.OpChanged, actor, now, ev)
		})
		if err != nil {
			return err
		}
		return l.catchUpLocked(ctx, o.store, project)
	})
}

// Dispatch is an executed Action waiting for a worker: the agent's Operation and the
// request to run.
type Dispatch struct {
	Agent   string
	Ordinal int64
	Request contract.ExecutionRequest
	// Approved is the vector a person approved, for an Action that needed a decision:
	// when it names a ToolDigest or Source, the call must run at that digest against that
	// Source and nowhere else (DESIGN.md §7.1).
	Approved *contract.RequestVector
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
				out = append(out, Dispatch{Agent: a, Ordinal: op.ordinal, Request: *op.execution, Approved: l.approvedLocked(a, op.ordinal)})
			}
		}
	}
	return out, nil
}

// approvedLocked returns the vector of the approved Request of the agent's Operation
// ordinal, or nil when none was needed.
func (l *Ledger) approvedLocked(agent string, ordinal int64) *contract.RequestVector {
	if r := l.approvedRequestLocked(agent, ordinal); r != nil {
		v := r.Vector
		return &v
	}
	return nil
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
	ev.State = contract.OpDone
	ev.Result, _ = json.Marshal(map[string]any{"action": op.execution.Action, "rows": len(out.Rows), "changes": len(res.Changes)})
	if len(res.Changes) == 0 && res.Case == nil {
		return nil, ev
	}
	return ch, ev
}
