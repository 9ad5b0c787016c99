package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// An Operation's whole life is in the project's log (its events are in package event),
// so every instance sharing the store sees the same Operations: the ledger below is only
// a projection of these events, caught up before each use.

// operation is one Operation as the ledger knows it.
type operation struct {
	ordinal    int64
	tool       string
	label      string
	input      json.RawMessage
	state      contract.OperationState
	stage      contract.OperationStage
	decision   string
	reason     string
	reasonCode contract.Code
	errorCode  contract.Code
	result     json.RawMessage
	execution  *contract.ExecutionRequest
	at, since  time.Time
	acked      bool
	attempt    int64                 // 1 for a first run
	retryOf    int64                 // the Operation this one retries, or 0
	outcome    *contract.HookOutcome // a hook call's outcome, as its hook reported it after the call ran
	// traceParent is the W3C traceparent of the call that made it (Event.TraceParent).
	traceParent string
	// seq is the log sequence of the last event that set its state and stage: for queued
	// work, when it was queued, which orders the queue the same on every instance.
	seq int64
	// summarized is summary's last text and what it was made of: a settled Operation's
	// entry is read each time its Agent's strip is derived (snapshot.go), and a new
	// string for the same words each time was among the ledger's most frequent
	// allocations.
	summarized struct {
		label string
		state contract.OperationState
		code  contract.Code
		text  string
	}
}

func (op *operation) apply(e event.Operation, at time.Time) {
	if e.State != "" && e.State != op.state {
		op.state, op.since = e.State, at
	}
	op.stage, op.decision, op.reason, op.reasonCode, op.errorCode = e.Stage, e.Decision, e.Reason, e.ReasonCode, e.ErrorCode
	if e.Result != nil {
		op.result = e.Result
	}
	if e.Execution != nil {
		op.execution = e.Execution
	}
	if e.TraceParent != "" {
		op.traceParent = e.TraceParent
	}
}

// ownOp is what the answer to the call that made an Operation reads of it: its state,
// why it failed or was refused, and its result.
type ownOp struct {
	state     contract.OperationState
	errorCode contract.Code
	reason    string
	result    json.RawMessage
}

// own returns what the answer to the call that made op reads of it. Nothing changes
// what it returns afterwards: apply replaces a result, never writes into one.
func (op *operation) own() ownOp {
	return ownOp{state: op.state, errorCode: op.errorCode, reason: op.reason, result: op.result}
}

// queued reports whether op waits for a worker: running, not dispatched, with an
// execution to serve.
func (op *operation) queued() bool {
	return op.state == contract.OpRunning && op.stage == contract.StageNotDispatched && op.execution != nil
}

// requeueLocked keeps op of agent in the ledger's queue exactly while it is queued.
// The project's ledger must be locked.
func (l *ledgerState) requeueLocked(agent string, op *operation) {
	if op.queued() {
		l.queue[op] = agent
	} else {
		delete(l.queue, op)
	}
}

// waiting applies an [event.OpWaiting] event: why queued work is not dispatched. It
// counts only while the work still waits; one that a claim or a settlement overtook in
// the log is ignored, so the log's order decides on every instance.
func (op *operation) waiting(e event.Operation) {
	if op.state == contract.OpRunning && op.stage == contract.StageNotDispatched {
		op.reason, op.reasonCode = e.Reason, e.ReasonCode
	}
}

// waitReason returns why the Operation's queued work waits, as its last
// [event.OpWaiting] event said: a reasonCode and a reason, both "" when nothing was said
// or a later state replaced it.
func (op *operation) waitReason() (contract.Code, string) {
	if op.state != contract.OpRunning || op.stage != contract.StageNotDispatched {
		return "", ""
	}
	return op.reasonCode, op.reason
}

// entry returns op as a strip entry: the result in full while unacknowledged. Its
// reasonCode is the Operation's own, else the code it was refused or failed with.
func (op *operation) entry() contract.OperationEntry {
	e := contract.OperationEntry{Tool: op.tool, Label: op.label, State: op.state, At: op.at, Since: op.since,
		Stage: op.stage, Decision: op.decision, Reason: op.reason, ReasonCode: op.reasonCode}
	if e.ReasonCode == "" {
		e.ReasonCode = op.errorCode
	}
	switch {
	case !op.state.Settled():
	case !op.acked:
		e.Result = op.result
	default:
		e.Summary = op.summary()
	}
	return e
}

func (op *operation) summary() string {
	m := &op.summarized
	if m.text != "" && m.label == op.label && m.state == op.state && m.code == op.errorCode {
		return m.text
	}
	text := op.label + " " + string(op.state)
	if op.errorCode != "" {
		text = fmt.Sprintf("%s %s: %s", op.label, op.state, op.errorCode)
	}
	m.label, m.state, m.code, m.text = op.label, op.state, op.errorCode, text
	return text
}

// artifact is an artifact the authority issued: its Agent and where its bytes are.
type artifact struct {
	Agent   string
	Hash    store.Hash
	Size    int64
	Expires time.Time // zero: kept for as long as the log (artifacts issued before retention)
}

// ledgerState is the projection of one project's operation, request, artifact and hop
// events: the pure [eventlog.State] the project's [eventlog.Driver] keeps under one lock
// and one cursor for an Operation's whole life, so that a hop call, which decides on
// Operations and on claims together, catches one projection up, not two. Its methods are
// called under that lock, through the project's [ledger].
type ledgerState struct {
	ops      map[string][]*operation                  // agent id → its Operations, ordinal i at index i-1
	open     map[string]int                           // agent id → how many of its Operations are not settled
	requests map[contract.RequestID]*contract.Request // every Request of the project
	order    []contract.RequestID                     // requests in creation order
	reqAt    *reqIndex                                // each Request's index in order, shared with the snapshots
	ended    map[contract.RequestID]string            // pending Requests whose Agent was revoked or re-tokened since, or whose Tool changed, and why
	voided   map[contract.RequestID]contract.Code     // of those, the ones a change of their Tool voided, and its code
	arts     map[string]artifact                      // ref → artifact
	setup    *board.Setup                             // see setupLocked; nil until made, or after an event may change it
	conns    map[contract.ConnectionID]*connRecord    // the project's Connections and their setup (setup.go)
	gaveUp   map[string]bool                          // Operations (opRef) the authority's sweep recorded it will not retry
	allow    map[string]*contract.AllowList           // agent id → its profile's allow-list, when it has one (allow.go)
	// queue holds the queued Operations (running, not_dispatched, with an execution) and
	// their agents, kept as events apply, so that a Poll reads the queue, not every
	// Operation the project ever had.
	queue map[*operation]string

	// The worker hop's (lease.go): claims and reports by work id, and the highest
	// generation each Connection's acquisition events name. A new generation exceeds it
	// as well as the lease row's, so generations keep growing across the upgrade that
	// introduced the lease row, when logs held leases and no row did.
	claims  map[string]event.WorkClaimedData
	reports map[string]event.WorkReportedData
	gens    map[contract.ConnectionID]int64

	// What the write gate decides on, by the seq of the last event that changed it, so an
	// admission's transaction sees whether it moved since the gate read it (gate.go,
	// gateMovedLocked): gateAt for the Board and the policies in force ([gateReads]),
	// setupAt for the Connections' setup and the profiles, opsAt for each agent's
	// Operations.
	gateAt, setupAt int64
	opsAt           map[string]int64

	// What the last snapshot handed out (snapshot.go), and what changed since: the
	// Agents whose Operations changed, with the indexes of those that did (ordinal - 1),
	// whether an allow-list did, and the indexes in order of the Requests that did. Not
	// the log's: the driver's publishing keeps them, under the lock.
	snap         *ledgerSnap
	touched      map[string][]int
	allowTouched bool
	reqTouched   []int

	// moved names what the event of seq movedSeq, the last an Operation's or an Agent's
	// credentials', moved, as Apply decoded it: the calls held on it are woken from it
	// ([ledger.wakeFor]) without decoding the event a second time.
	moved    holdKey
	movedSeq int64
}

// newLedgerState returns the State of an empty log.
func newLedgerState() *ledgerState {
	return &ledgerState{
		ops: map[string][]*operation{}, open: map[string]int{}, requests: map[contract.RequestID]*contract.Request{},
		ended: map[contract.RequestID]string{}, arts: map[string]artifact{}, gaveUp: map[string]bool{},
		voided: map[contract.RequestID]contract.Code{}, allow: map[string]*contract.AllowList{},
		conns: map[contract.ConnectionID]*connRecord{}, queue: map[*operation]string{},
		claims: map[string]event.WorkClaimedData{}, reports: map[string]event.WorkReportedData{}, gens: map[contract.ConnectionID]int64{},
		opsAt:   map[string]int64{},
		touched: map[string][]int{}, reqAt: &reqIndex{},
	}
}

// ledger is one project's ledgerState under the project's lock, as the driver keeps them,
// and beside it what is not from the log: the calls held on its Operations (hold.go),
// which the driver's follow goroutine keeps caught up ([eventlog.Driver.Follow]).
// Between [ledger.lock] and [ledger.unlock] its fields are the lock holder's, and its
// embedded State is the driver's as far as it was caught up: every catch-up refreshes
// it, since a rebuild replaces the State ([eventlog.Cursor]). The lock order is in the
// authority's package doc.
type ledger struct {
	*ledgerState // nil unless locked
	project      contract.ProjectID
	drv          *eventlog.Driver[*ledgerState]
	log          *slog.Logger
	held         *eventlog.Held[*ledgerState] // nil unless locked
	// along says the lock is another part's, taken through it ([ledger.lockAlong]), so
	// unlock leaves it held.
	along bool

	// Held calls (hold.go): their wakes by Operation, guarded by holdMu, which is taken
	// alone (a call starting or ending its hold) or under the project's lock (a wake, as
	// an event applies), never around it: a held call registers and ends its hold
	// without queueing for the project's lock among the writes.
	holdMu sync.Mutex
	holds  map[holdKey]*holdWake

	// admits is the project's admissions waiting to commit together (gate.go).
	admits batchQueue[*admitCall]

	// views is the last View answered to each principal, with what it was built from,
	// at most maxKeptViews of them (viewkeep.go). Guarded by viewMu, not the project's
	// lock: an answer from the ledger's snapshot keeps its View too (snapshot.go).
	viewMu sync.Mutex
	views  map[contract.Principal]keptView
	// matches is the last matches read of each QueryBoard pattern, under the Board
	// version they were read at, at most maxKeptMatches of them (matchkeep.go). Guarded
	// by viewMu.
	matches map[string]keptMatch
}

// lock takes the project's lock; the caller must [ledger.unlock] it.
func (l *ledger) lock() {
	h := l.drv.Lock(l.project)
	l.held, l.ledgerState = h, h.State()
}

// lockAlong takes the ledger under h, the project's log as another part of it holds it
// (a Board write's, [boards.Write.Held]): the lock is h's, one for the Board, the ledger
// and the policies, so the ledger is taken through it ([eventlog.Along]) and never
// locked again (docs/architecture.md, "The lock order"). A nil h locks it as
// [ledger.lock] does. The caller must [ledger.unlock] it, which leaves h's lock held.
func (l *ledger) lockAlong(h eventlog.Holding) {
	if h == nil {
		l.lock()
		return
	}
	held := eventlog.Along(h, l.drv)
	l.held, l.ledgerState, l.along = held, held.State(), true
}

// unlock releases the project's lock, or, taken along another part's, only the ledger.
func (l *ledger) unlock() {
	h, along := l.held, l.along
	l.held, l.ledgerState, l.along = nil, nil, false
	if !along {
		h.Unlock()
	}
}

// seq is the sequence number of the last event the ledger applied. l must be locked.
func (l *ledger) seq() int64 { return l.held.Seq() }

// catchUpLocked applies the events of the project after the cursor, read from r (the
// store, or a transaction that sees its own writes). l must be locked.
func (l *ledger) catchUpLocked(ctx context.Context, r store.Reader) error {
	_, err := l.held.CatchUp(ctx, r)
	return l.caughtUp(err)
}

// catchUpToLocked is catchUpLocked for a caller that knows a head to reach (one it has
// just read or locked, or the head its own commit left): it reads no head, and no events
// when the cursor is there already or this process committed them
// ([eventlog.Held.CatchUpTo]). l must be locked.
func (l *ledger) catchUpToLocked(ctx context.Context, r store.Reader, head int64) error {
	_, err := l.held.CatchUpTo(ctx, r, head)
	return l.caughtUp(err)
}

// updateLocked runs decide in the project's one write sequence ([eventlog.Held.Update]):
// in one store transaction it locks the log's head, catches the ledger up to it inside
// the transaction, runs decide on that State (it appends what it decides through tx,
// held back and appended in one call), commits, and applies the write's own events from
// memory, with no read (docs/architecture.md, "The project state and its driver").
// decide's own error comes back as it returned it; the ledger is looked up again after,
// since a catch-up may have rebuilt the State, on a failure too. l must be locked.
func (l *ledger) updateLocked(ctx context.Context, decide func(tx store.Tx) error) error {
	return l.updateWithLocked(ctx, eventlog.Write{}, decide)
}

// updateWithLocked is updateLocked as w says ([eventlog.Held.UpdateWith]). l must be
// locked.
func (l *ledger) updateWithLocked(ctx context.Context, w eventlog.Write, decide func(tx store.Tx) error) error {
	_, err := l.held.UpdateWith(ctx, w, func(tx store.Tx, st *ledgerState) error {
		l.ledgerState = st
		return decide(tx)
	})
	return l.committed(ctx, l.caughtUp(err))
}

// committed is [eventlog.Committed] for l's project: a ledger write the log holds is
// answered as committed, also when a State of this instance did not apply it.
func (l *ledger) committed(ctx context.Context, err error) error {
	return eventlog.Committed(ctx, l.log, l.project, err)
}

// caughtUp follows a catch-up that returned err: the State may have been rebuilt, so
// the ledger looks it up again. The calls held on what the catch-up applied were woken
// as each event applied ([Operations.applied]).
func (l *ledger) caughtUp(err error) error {
	l.ledgerState = l.held.State()
	return err
}

// Apply applies e, the next event of the log ([eventlog.State]): it does no I/O and reads
// no clock; the calls held on what it moved are woken by the ledger as it applies
// ([Operations.applied]).
func (l *ledgerState) Apply(e store.Event) error {
	if gateReads(e.Type) {
		l.gateAt = e.Seq
	}
	if event.ChangesSetup(e.Type) || e.Type == event.ProfileSet {
		l.setupAt = e.Seq
	}
	if event.ChangesSetup(e.Type) {
		if err := l.applySetupLocked(e); err != nil {
			return err
		}
	}
	switch e.Type {
	case event.OpAdmitted, event.OpChanged, event.OpAcknowledged, event.OpWaiting:
		d, err := event.DecodeOperation(e.Data)
		if err != nil {
			return err
		}
		l.moved, l.movedSeq = holdKey{d.Agent, d.Ordinal}, e.Seq
		return l.applyOp(e, d)
	case event.AgentRevoked, event.AgentTokenReplaced:
		var a event.IDRef // the shape of both events
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return err
		}
		l.moved, l.movedSeq = holdKey{a.ID, 0}, e.Seq
		why := "the agent that made the request was revoked"
		if e.Type == event.AgentTokenReplaced {
			why = "the agent that made the request had its token replaced"
		}
		l.closeAgentLocked(a.ID, why)
		return nil
	}
	return l.applyOther(e)
}

// applyOp applies e, an event of an Operation with data d.
func (l *ledgerState) applyOp(e store.Event, d event.Operation) error {
	l.opsAt[d.Agent] = e.Seq
	l.touched[d.Agent] = append(l.touched[d.Agent], int(d.Ordinal-1))
	ops := l.ops[d.Agent]
	if e.Type == event.OpAdmitted {
		if d.Ordinal != int64(len(ops))+1 {
			return fmt.Errorf("operation %d of %s admitted after %d", d.Ordinal, d.Agent, len(ops))
		}
		op := &operation{ordinal: d.Ordinal, tool: d.Tool, label: d.Label, input: d.Input,
			state: d.State, stage: d.Stage, decision: d.Decision, reason: d.Reason, errorCode: d.ErrorCode,
			result: d.Result, execution: d.Execution, at: e.At, since: e.At, attempt: max(d.Attempt, 1), retryOf: d.RetryOf,
			traceParent: d.TraceParent, seq: e.Seq}
		l.ops[d.Agent] = append(ops, op)
		if !op.state.Settled() {
			l.open[d.Agent]++
		}
		l.requeueLocked(d.Agent, op)
		return nil
	}
	if d.Ordinal < 1 || d.Ordinal > int64(len(ops)) {
		return fmt.Errorf("%s names operation %d of %s, which was never admitted", e.Type, d.Ordinal, d.Agent)
	}
	switch e.Type {
	case event.OpAcknowledged:
		ops[d.Ordinal-1].acked = true
		return nil
	case event.OpWaiting:
		ops[d.Ordinal-1].waiting(d)
		return nil
	}
	op := ops[d.Ordinal-1]
	wasOpen := !op.state.Settled()
	op.apply(d, e.At)
	if isOpen := !op.state.Settled(); isOpen != wasOpen {
		if isOpen {
			l.open[d.Agent]++
		} else {
			l.open[d.Agent]--
		}
	}
	op.seq = e.Seq
	l.requeueLocked(d.Agent, op)
	return nil
}

// applyOther applies e, an event of neither an Operation nor an Agent's credentials.
func (l *ledgerState) applyOther(e store.Event) error {
	switch e.Type {
	case event.RequestCreated, event.RequestChanged:
		var d event.RequestCreatedData // the shape of both events
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		r := d.Request
		i, ok := l.reqAt.at(r.ID)
		if !ok {
			i = len(l.order)
			l.order = append(l.order, r.ID)
			l.reqAt.add(r.ID, i)
		}
		l.requests[r.ID] = &r
		l.reqTouched = append(l.reqTouched, i)
	case event.ToolUnlocked, event.ToolApprovalSet, event.ToolLocked:
		var t event.ToolLockedData // the shape of all three events
		if err := json.Unmarshal(e.Data, &t); err != nil {
			return err
		}
		l.voidToolLocked(t.Tool, e.Type == event.ToolUnlocked)
	case event.ProfileSet:
		return l.applyProfileLocked(e)
	case event.HookReported:
		var h event.HookReportedData
		if err := json.Unmarshal(e.Data, &h); err != nil {
			return err
		}
		if op := l.opLocked(h.Agent, h.Ordinal); op != nil && op.outcome == nil {
			op.outcome = &h.Outcome
		}
	case event.RecoveryRefused:
		var r event.Recovery
		if err := json.Unmarshal(e.Data, &r); err != nil {
			return err
		}
		if r.Actor == authorityActor {
			l.gaveUp[r.Operation] = true
		}
	case event.LeaseAcquired, event.WorkClaimed, event.WorkReported:
		return l.applyHopLocked(e)
	case event.ArtifactIssued:
		var a event.ArtifactIssuedData
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return err
		}
		var h store.Hash
		if err := h.UnmarshalText([]byte(a.Hash)); err != nil {
			return fmt.Errorf("artifact %s: %w", a.Ref, err)
		}
		l.arts[a.Ref] = artifact{Agent: a.Agent, Hash: h, Size: a.Size, Expires: a.ExpiresAt}
	}
	return nil
}

// unresolvedLocked returns the agent's Operation that is not settled (running, waiting
// for a decision or needing a person), or nil. At most one exists: the write gate admits
// no write while one does. Hook calls stand outside the gate (hook.go), and so does a
// docket.ask whose asked task runs (ask.go): an Agent asks several Agents in parallel.
//
// It reads back only as far as the oldest Operation of the agent not settled (l.open
// counts them): the write gate asks on every admission, and an Agent's history only
// grows, so reading it all when nothing is open made each admission cost the Agent's
// whole history.
func (l *ledgerState) unresolvedLocked(agent string) *operation {
	ops := l.ops[agent]
	for i, open := len(ops)-1, l.open[agent]; i >= 0 && open > 0; i-- {
		if ops[i].state.Settled() {
			continue
		}
		if ops[i].tool != hookTool && !asking(ops[i]) {
			return ops[i]
		}
		open--
	}
	return nil
}

// latestSettledLocked returns the agent's latest settled Operation, or nil; hook calls,
// whose outcome the hook answers at once, are not among them.
func (l *ledgerState) latestSettledLocked(agent string) *operation {
	ops := l.ops[agent]
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].state.Settled() && ops[i].tool != hookTool {
			return ops[i]
		}
	}
	return nil
}

// stripLocked returns the strip of agent: newest first, at most
// [contract.MaxStrip] entries — the latest five, any unresolved, the latest settled.
func (l *ledgerState) stripLocked(agent string) []contract.OperationSlot {
	return l.stripFromLocked(agent, nil, nil)
}

// stripFromLocked is stripLocked for an Agent whose strip was prev when the indexes in
// changed (ordinal - 1, sorted) were the only ones of its Operations that changed since:
// an entry of prev whose Operation did not change is taken as it is (an entry is a
// function of its Operation alone), rather than derived again.
func (l *ledgerState) stripFromLocked(agent string, prev []contract.OperationSlot, changed []int) []contract.OperationSlot {
	ops := l.ops[agent]
	keep := make([]*operation, 0, contract.MaxStrip)
	add := func(op *operation) {
		if op != nil && !slices.Contains(keep, op) && len(keep) < contract.MaxStrip {
			keep = append(keep, op)
		}
	}
	for i := len(ops) - 1; i >= 0 && i >= len(ops)-5; i-- {
		add(ops[i])
	}
	// The unsettled ones, newest first, read back only as far as the oldest of them: the
	// strip is derived each time an Agent's Operations change (snapshot.go), and an
	// Agent's history only grows.
	for i, open := len(ops)-1, l.open[agent]; i >= 0 && open > 0; i-- {
		if !ops[i].state.Settled() {
			add(ops[i])
			open--
		}
	}
	add(l.latestSettledLocked(agent))
	slices.SortFunc(keep, func(a, b *operation) int { return int(b.ordinal - a.ordinal) })
	out := make([]contract.OperationSlot, 0, len(keep))
	for _, op := range keep {
		if i := slices.IndexFunc(prev, func(s contract.OperationSlot) bool { return s.Ordinal == op.ordinal }); i >= 0 {
			if _, moved := slices.BinarySearch(changed, int(op.ordinal-1)); !moved {
				out = append(out, prev[i])
				continue
			}
		}
		out = append(out, contract.OperationSlot{Ordinal: op.ordinal, OperationEntry: op.entry()})
	}
	return out
}

// opLocked returns the agent's Operation ordinal, or nil.
func (l *ledgerState) opLocked(agent string, ordinal int64) *operation {
	ops := l.ops[agent]
	if ordinal < 1 || ordinal > int64(len(ops)) {
		return nil
	}
	return ops[ordinal-1]
}

// toolRun is what running a write on the Board produced: the Board change to persist (nil
// when nothing changed), the Operation's first state, any Request it raised, and the
// Cases it focuses.
type toolRun struct {
	change  *boards.Change
	op      event.Operation
	request *contract.Request
	focus   []contract.CaseID
	// person says the Agent is manual: an ApplyAction waits for a person's decision
	// whatever its Action declares.
	person bool
	taskBy []contract.Principal // the call's [Call.TaskBy]
	// ask is the task a docket.ask posts once it runs; nil for any other call.
	ask *askPlan
}

// run runs a write call on b. A Board refusal is an outcome, not an error: the Operation
// settles refused with its code, and b is unchanged (Board changes are all-or-nothing).
// A manual Agent's call (person) changes nothing: it waits for a member's decision on a
// Request bound to the digest of the call.
// l is the project's ledger, which the admission holds.
func (o *Operations) run(ctx context.Context, l *ledger, b *board.Board, c identity.Caller, call Call, setup board.Setup, conns []*connRecord, now time.Time, person bool) toolRun {
	r := toolRun{person: person, taskBy: call.TaskBy}
	switch in := call.Input.(type) {
	case *contract.ApplyActionInput:
		r.op.Label = "ApplyAction " + in.Action
		if in.Action == contract.ActionAsk {
			return o.runAsk(ctx, l, c, call.Ask, in, now, r)
		}
		if in.CaseID != "" {
			r.focus = []contract.CaseID{in.CaseID}
		}
		return o.runAction(ctx, b, c, in, setup, conns, now, r)
	case *contract.OpenCaseInput, *contract.Batch, *contract.CloseCaseInput:
		if !person {
			return boardAct(b, c.Principal(), call.Input, now, r)
		}
		r.op.Label, r.focus = actLabel(call.Input)
		vec, err := boardActVector(c.Projects[0], c.ID, call.Tool, call.Input)
		if err != nil {
			return settleRun(r, nil, err)
		}
		return o.requestRun(c, vec, now, r)
	}
	return settleRun(r, nil, contract.Errorf(contract.CodeNoSuchTool, "there is no tool %s; use one of the six", call.Tool))
}

// actLabel returns the strip label of a Board act (OpenCase, ApplyBatch or CloseCase) and
// the Cases it focuses before it runs.
func actLabel(input any) (string, []contract.CaseID) {
	switch in := input.(type) {
	case *contract.OpenCaseInput:
		return "OpenCase " + in.CaseType, nil
	case *contract.Batch:
		return fmt.Sprintf("ApplyBatch %d ops", len(in.Operations)), nil
	case *contract.CloseCaseInput:
		return "CloseCase " + string(in.CaseID) + " " + string(in.Disposition), []contract.CaseID{in.CaseID}
	}
	return "", nil
}

// boardAct runs a Board act of p on b at now: r with its change and outcome. A manual
// Agent's act runs here too, once a member approved it.
func boardAct(b *board.Board, p contract.Principal, input any, now time.Time, r toolRun) toolRun {
	r.op.Label, r.focus = actLabel(input)
	var result any
	var err error
	switch in := input.(type) {
	case *contract.OpenCaseInput:
		var cs contract.Case
		var changes []contract.NodeChange
		if cs, changes, err = b.OpenCase(p, in.CaseType, in.BusinessKey, now); err == nil {
			r.change = &boards.Change{Nodes: changes, Cases: []contract.Case{cs}, Event: event.CaseOpenedData{Case: cs}}
			r.focus, result = []contract.CaseID{cs.CaseID}, map[string]any{"case": cs}
		}
	case *contract.Batch:
		var br board.BatchResult
		if br, err = b.ApplyBatch(board.Author{Principal: p}, *in); err == nil {
			r.change = &boards.Change{Nodes: br.Changes, Event: event.BatchAppliedData{NodeIDs: br.NodeIDs, Changes: br.Changes}}
			result = map[string]any{"nodeIds": br.NodeIDs}
		}
	case *contract.CloseCaseInput:
		var cr board.CloseResult
		if cr, err = b.CloseCase(p, in.CaseID, in.Disposition, in.Reason, now); err == nil {
			r.change = &boards.Change{Nodes: cr.Changes, Cases: []contract.Case{cr.Case}, Event: event.CaseClosedData{ClosureReceipt: cr.Receipt}}
			result = map[string]any{"case": cr.Case, "receipt": cr.Receipt}
		}
	default:
		err = fmt.Errorf("a Board act of %T", input)
	}
	return settleRun(r, result, err)
}

// settleRun completes r with its outcome: done with result, or refused with err's code.
func settleRun(r toolRun, result any, err error) toolRun {
	if err != nil {
		r.change = nil
		r.op.State = contract.OpRefused
		r.op.ErrorCode, r.op.Reason, r.op.Result = errorResult(err)
		return r
	}
	b, err := json.Marshal(result)
	if err != nil {
		return settleRun(r, nil, fmt.Errorf("encode the result: %w", err))
	}
	r.op.State, r.op.Result = contract.OpDone, b
	return r
}

// query answers QueryBoard: the matches of its pattern and the View. It is never an
// Operation and passes no gate.
func (o *Operations) query(ctx context.Context, c identity.Caller, call Call, in *contract.QueryBoardInput) (Answer, error) {
	focus := call.Focus
	if len(in.Focus) > 0 {
		focus = mergeFocus(in.Focus, nil)
	}
	r := reply{focus: focus, extra: json.RawMessage(`{}`), delivered: call.Delivered}
	if in.Pattern != nil {
		var caseID contract.CaseID
		if len(focus) > 0 {
			caseID = focus[0]
		}
		limit := min(in.Limit, board.QueryMaxMatches)
		r.query = queryKey(*in.Pattern, caseID, limit)
		r.match = func(b *board.Board) (json.RawMessage, error) {
			matches, err := b.Query(*in.Pattern, caseID, limit)
			if err != nil {
				return nil, err
			}
			// A struct of one field writes what the map of one key did, without the map.
			return json.Marshal(struct {
				Matches contract.Bounded[contract.Node] `json:"matches"`
			}{matches})
		}
	}
	return o.reply(ctx, c, r)
}
