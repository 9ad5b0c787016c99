package operation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	policydoc "github.com/docketrun/docket/internal/policy"
	"github.com/docketrun/docket/internal/store"
)

// Held is an admitted write whose answer is held: [Operations.Begin] returns it, its Wait
// holds it and its Answer answers it.
type Held struct {
	o        *Operations
	c        identity.Caller
	ad       admission
	progress func(contract.OperationSlot)
	told     contract.OperationEntry // the state progress was last told
	seen     int64                   // the ledger's cursor when Wait saw the Operation no longer run; 0 before
}

// Wait holds h while its Operation is running: until it settles, needs a decision or a
// person, or the hold bound passes. It finds the outcome through the store
// ([store.Store.Wait]), so an Operation settled by another instance ends the hold too.
// Reaching the bound is not an error and cancels nothing. When ctx ends first, Wait
// returns its cause.
//
// A held call costs its goroutine parked on its Operation's wake and nothing else: it
// follows the project's log through the ledger's driver ([eventlog.Driver.Follow]),
// whose one goroutine per project waits on the store and catches the ledger up, and the
// ledger wakes only the holds whose Operation an applied event names
// ([Operations.applied]), so an event costs one catch-up however many calls are held.
// Wait's own frame is small — the reads and the progress run in [Held.step], which
// returns before Wait parks — because a parked goroutine's stack shrinks only to four
// times what it uses, and a serve holds thousands of them.
func (h *Held) Wait(ctx context.Context) error {
	bound, cancel := context.WithTimeout(ctx, h.o.holdBound)
	defer cancel()
	l := h.o.ledger(h.c.Projects[0])
	key := holdKey{h.c.ID, h.ad.ordinal}
	l.watch(key)
	defer l.unwatch(key)
	// A call whose Operation is settled already (a Board write, a refusal) ends here,
	// without starting the log's follow goroutine it would stop at once. One that waits
	// follows the log from here: the goroutine catches the ledger up from its cursor,
	// whenever it starts, so an event applied after this step still closes woken.
	woken, err := h.step(l, key, false)
	if err != nil || woken == nil {
		return err
	}
	stop, err := h.o.follow(l.project)
	if err != nil {
		return holdErr(key, err)
	}
	defer stop()
	for {
		select {
		case <-woken:
		case <-bound.Done():
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return nil
		}
		if woken, err = h.step(l, key, true); err != nil {
			return err
		}
		if woken == nil {
			return nil
		}
	}
}

// holdErr is why the call held on key ends when the log could not be followed for it:
// the driver's error, or [errClosed] once the Operations were closed.
func holdErr(key holdKey, err error) error {
	if errors.Is(err, eventlog.ErrClosed) {
		err = errClosed
	}
	return fmt.Errorf("hold operation %d of %s: %w", key.ordinal, key.agent, err)
}

// step tells progress the Operation's state when it changed, and returns the wake to
// wait on while the Operation runs, nil once it no longer does; then it notes the
// ledger's cursor in h.seen: a head of the log at which the outcome is committed, read
// during the call, which the answer then reads the Board, the strip and the policies at
// (eventlog.WithHead) instead of reading the head again. following says the call
// follows the log ([eventlog.Driver.Follow]): only then does the follow goroutine's
// failure end it.
func (h *Held) step(l *ledger, key holdKey, following bool) (<-chan struct{}, error) {
	l.lock()
	var err error
	if following {
		err = l.held.FollowErr() // before Follow, the error of a goroutine ended earlier
	}
	var slot contract.OperationSlot
	if op := l.opLocked(key.agent, key.ordinal); op != nil {
		slot = contract.OperationSlot{Ordinal: key.ordinal, OperationEntry: op.entry()}
		if op.state != contract.OpRunning {
			h.seen = l.seq()
		}
	}
	// Taken under the project's lock, which every wake holds: no event applies between
	// the state read above and this wake, so none is missed.
	l.holdMu.Lock()
	woken := l.holds[key].ch
	l.holdMu.Unlock()
	l.unlock()
	if err != nil {
		return nil, holdErr(key, err)
	}
	if h.progress != nil && (slot.State != h.told.State || slot.Stage != h.told.Stage || slot.ReasonCode != h.told.ReasonCode) {
		h.progress(slot)
		h.told = slot.OperationEntry
	}
	if slot.State != contract.OpRunning {
		return nil, nil
	}
	return woken, nil
}

// Answer answers h after its Wait returned nil: the Operation's outcome, or running when
// the hold bound passed.
func (h *Held) Answer(ctx context.Context) (Answer, error) {
	if h.seen > 0 {
		ctx = eventlog.WithHead(ctx, h.c.Projects[0], h.seen)
	}
	return h.o.answer(ctx, h.c, h.ad.focus, contract.ToolResult{}, h.ad.ordinal, nil, &h.ad.setup)
}

// watch registers a call held on key, so that an event that moves its Operation wakes
// it ([ledger.wakeFor]).
func (l *ledger) watch(key holdKey) {
	l.holdMu.Lock()
	defer l.holdMu.Unlock()
	if l.holds == nil {
		l.holds = map[holdKey]*holdWake{}
	}
	w := l.holds[key]
	if w == nil {
		w = &holdWake{ch: make(chan struct{})}
		l.holds[key] = w
	}
	w.n++
}

// unwatch ends a call held on key.
func (l *ledger) unwatch(key holdKey) {
	l.holdMu.Lock()
	defer l.holdMu.Unlock()
	w := l.holds[key]
	if w.n--; w.n == 0 {
		delete(l.holds, key)
	}
}

// holdKey names the Operation a held call waits on.
type holdKey struct {
	agent   string
	ordinal int64
}

// holdWake is the wake of the calls held on one Operation: ch is closed, and replaced,
// when the ledger applies an event that names the Operation.
type holdWake struct {
	ch chan struct{}
	n  int // calls held on it
}

// applied is the operation ledger's applied notification ([eventlog.Driver.OnApply]):
// it wakes the calls held on what e, just applied to project's State, moved. The State
// stays pure, and the ledger, which keeps the holds beside it, wakes them: an event
// costs its one wake whichever catch-up applied it. It runs under the project's lock,
// taken by the caller of the catch-up.
func (o *Operations) applied(project contract.ProjectID, s *ledgerState, e store.Event) {
	o.ledger(project).wakeFor(s, e)
}

// followFailed is the operation ledger's notification that the driver stopped following
// project's log for its held calls ([eventlog.Driver.OnFollowError]): a read failed, or
// the Operations were closed. It wakes every call held on the project, and each reads
// the error ([eventlog.Held.FollowErr]) and ends with it, as its own read would have. It
// runs under the project's lock.
func (o *Operations) followFailed(project contract.ProjectID, _ error) {
	o.ledger(project).wakeAllLocked()
}

// wakeAllLocked wakes every call held on the ledger. l must be locked.
func (l *ledger) wakeAllLocked() {
	l.holdMu.Lock()
	defer l.holdMu.Unlock()
	l.wakeAllHeld()
}

// wakeAllHeld wakes every call held on the ledger. l.holdMu must be held.
func (l *ledger) wakeAllHeld() {
	for _, w := range l.holds {
		close(w.ch)
		w.ch = make(chan struct{})
	}
}

// wakeFor wakes the calls held on the Operation e moves: the one an Operation's event
// names, or every Operation of an Agent whose credentials it ends. s is the State that
// has just applied e, and says what e moved as it decoded it (ledgerState.moved). l
// must be locked.
func (l *ledger) wakeFor(s *ledgerState, e store.Event) {
	l.holdMu.Lock()
	defer l.holdMu.Unlock()
	if len(l.holds) == 0 {
		return // nothing to wake; the event is not decoded again
	}
	var k holdKey
	var err error
	switch e.Type {
	case event.OpAdmitted, event.OpChanged, event.OpAcknowledged, event.OpWaiting,
		event.AgentRevoked, event.AgentTokenReplaced:
		if s != nil && s.movedSeq == e.Seq && e.Seq != 0 {
			l.wakeLocked(s.moved.agent, s.moved.ordinal)
			return
		}
	}
	switch e.Type {
	case event.OpAdmitted, event.OpChanged, event.OpAcknowledged, event.OpWaiting:
		var d struct { // of event.Operation, only what names it
			Agent   string `json:"agent"`
			Ordinal int64  `json:"ordinal"`
		}
		err = json.Unmarshal(e.Data, &d)
		k = holdKey{d.Agent, d.Ordinal}
	case event.AgentRevoked, event.AgentTokenReplaced:
		var a event.IDRef // the shape of both events
		err = json.Unmarshal(e.Data, &a)
		k = holdKey{a.ID, 0}
	default:
		return
	}
	if err != nil {
		// The State applied it, so this cannot fail; were it to, waking every hold
		// costs each a look at its Operation, where missing one would hold it stale.
		l.wakeAllHeld()
		return
	}
	l.wakeLocked(k.agent, k.ordinal)
}

// wakeLocked wakes the calls held on agent's Operation ordinal, or on every Operation of
// agent when ordinal is 0. l must be locked, and l.holdMu held.
func (l *ledger) wakeLocked(agent string, ordinal int64) {
	if ordinal != 0 {
		if w := l.holds[holdKey{agent, ordinal}]; w != nil {
			close(w.ch)
			w.ch = make(chan struct{})
		}
		return
	}
	for k, w := range l.holds {
		if k.agent == agent {
			close(w.ch)
			w.ch = make(chan struct{})
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
	// TraceParent is the W3C traceparent of the call that queued it, from the log; "" when
	// that call was not traced.
	TraceParent string
	// PathCheck names the argument whose path the worker checks before it runs the call
	// (contract.Grant.PathCheck): set when an orchestrator approved it under a path class.
	PathCheck string
}

// Queued returns project's Operations whose execution waits for a worker
// (running, not_dispatched), in the order they were queued in the log, oldest first.
// It is the worker hop's queue; a worker claims one through the hop ([Dispatcher.Claim]),
// and a report settles it. Serving it oldest first is what keeps a busy queue fair: in
// any other order (it was once by agent id) a Poll that serves fewer rows than are
// queued serves the same agents again and again while the rest wait.
func (o *Operations) Queued(ctx context.Context, project contract.ProjectID) ([]Dispatch, error) {
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return nil, err
	}
	return l.queuedLocked(), nil
}

// queuedOn is [Operations.Queued] with conn's setup, both read from the ledger caught up
// to head, a head of the project's log the caller read during its call, so the queue and
// the setup are the log's at one point; a Connection the log shows revoked is refused
// ([ledger.connLocked]).
func (o *Operations) queuedOn(ctx context.Context, conn contract.Connection, head int64) ([]Dispatch, connSetup, error) {
	l := o.ledger(conn.Project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpToLocked(ctx, o.store, head); err != nil {
		return nil, connSetup{}, err
	}
	rec, err := l.connLocked(conn)
	if err != nil {
		return nil, connSetup{}, err
	}
	return l.queuedLocked(), connSetup{conn: conn, rec: rec}, nil
}

// queuedWithConns is [Operations.Queued] with the project's live Connections and their
// setup, both read from the ledger caught up to one head.
func (o *Operations) queuedWithConns(ctx context.Context, project contract.ProjectID) ([]Dispatch, []connSetup, error) {
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return nil, nil, err
	}
	var conns []connSetup
	for _, c := range l.liveConnsLocked() {
		conns = append(conns, connSetup{conn: c.wire(project), rec: c})
	}
	return l.queuedLocked(), conns, nil
}

// queuedLocked is the queue [Operations.Queued] returns. The project's ledger must be
// locked.
func (l *ledgerState) queuedLocked() []Dispatch {
	type queued struct {
		agent string
		op    *operation
	}
	qs := make([]queued, 0, len(l.queue))
	for op, a := range l.queue {
		qs = append(qs, queued{a, op})
	}
	slices.SortFunc(qs, func(x, y queued) int { return cmp.Compare(x.op.seq, y.op.seq) })
	var out []Dispatch // nil for an empty queue, as callers have always been given it
	if len(qs) > 0 {
		out = make([]Dispatch, 0, len(qs))
	}
	for _, q := range qs {
		d := Dispatch{Agent: q.agent, Ordinal: q.op.ordinal, Request: *q.op.execution, TraceParent: q.op.traceParent}
		if r := l.approvedRequestLocked(q.agent, q.op.ordinal); r != nil {
			v := r.Vector
			d.Approved = &v
			if r.Delegated != nil && r.Delegated.Path != "" {
				d.PathCheck = policydoc.PathArg
			}
		}
		out = append(out, d)
	}
	return out
}

// approvedRequestLocked returns the approved Request of the agent's Operation ordinal, or
// nil. An Operation has at most one: an approval voided at dispatch is void, not approved.
func (l *ledgerState) approvedRequestLocked(agent string, ordinal int64) *contract.Request {
	for _, id := range l.order {
		r := l.requests[id]
		if r.State == contract.RequestApproved && r.Ordinal == ordinal && r.RequestedBy.ID() == agent && r.RequestedBy.Kind() == contract.PrincipalAgent {
			return r
		}
	}
	return nil
}

// applyOutcome applies an ok outcome to b: the Board change (nil when the rows change
// nothing) and the Operation done, or failed when the Board refuses the rows.
func applyOutcome(b *board.Board, op *operation, by board.Author, out contract.ExecutionOutcome, ev event.Operation) (*boards.Change, event.Operation) {
	res, err := b.ApplyOutcome(by, *op.execution, out)
	if err != nil {
		ev.State = contract.OpFailed
		ev.ErrorCode, ev.Reason, ev.Result = errorResult(err)
		return nil, ev
	}
	ch := actionChange(&contract.ApplyActionInput{CaseID: op.execution.CaseID, Action: op.execution.Action, Params: op.execution.Args}, res)
	ch.Event = event.ActionCompletedData{Action: op.execution.Action, CaseID: op.execution.CaseID, Params: op.execution.Args}
	if ev.Result, err = outcomeResult(op.execution.Action, len(out.Rows), len(res.Changes)); err != nil {
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

// outcomeResult is the Result of an Action's Operation done: json.Marshal of the map
// {"action": action, "rows": rows, "changes": changes}, written in its sorted keys'
// order around the action's own encoding, where encoding the map sorted its keys and
// reflected on each value on every report.
func outcomeResult(action string, rows, changes int) (json.RawMessage, error) {
	a, err := json.Marshal(action)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(a)+48)
	b = append(b, `{"action":`...)
	b = append(b, a...)
	b = append(b, `,"changes":`...)
	b = strconv.AppendInt(b, int64(changes), 10)
	b = append(b, `,"rows":`...)
	b = strconv.AppendInt(b, int64(rows), 10)
	return append(b, '}'), nil
}
