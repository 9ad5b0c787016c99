package operation

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/policy"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Defaults for [Config].
const (
	DefaultHoldBound  = 50 * time.Second
	DefaultRequestTTL = 24 * time.Hour
)

// Config configures [New].
type Config struct {
	// HoldBound is how long a write's answer is held waiting for its outcome before it
	// answers running; default DefaultHoldBound.
	HoldBound time.Duration
	// RequestTTL is how long a Request waits for a decision before it expires; default
	// DefaultRequestTTL.
	RequestTTL time.Duration
	// SweepEvery is how often Run settles Requests that no longer take a decision;
	// default DefaultSweepEvery.
	SweepEvery time.Duration
	// MaxHookWaiting and MaxHookPerMinute bound one Agent's hook calls; defaults
	// DefaultMaxHookWaiting and DefaultMaxHookPerMinute.
	MaxHookWaiting, MaxHookPerMinute int
	// MaxWritesPerMinute bounds the writes one Agent's calls at /mcp make in any minute;
	// default DefaultMaxWritesPerMinute.
	MaxWritesPerMinute int
	// ArtifactRetention is how long an artifact issued now can be read; default
	// contract.DefaultArtifactRetention.
	ArtifactRetention time.Duration
}

// Deps is what Operations reads and writes through.
type Deps struct {
	Store  store.Store
	Boards *boards.Cache
	Now    func() time.Time // default: time.Now
	Rand   io.Reader        // default: crypto/rand.Reader
	Log    *slog.Logger     // default: discards
	// Policies gives the policy in force that each decision records; nil means the
	// built-in versions.
	Policies *policy.Book
	// ProjectLog is the project log the ledger joins ([eventlog.Join]): the log the
	// Boards and the Policies joined, so that a Board write takes the ledger, and a call
	// holding the ledger reads the policies in force, under the one lock. nil: the
	// Boards' log, else the Policies', else one of the ledger's own.
	ProjectLog *eventlog.Log
	// AskOpen refuses a docket.ask about to be posted once the task that asked ended, was
	// cancelled or has as many asks open as it may (ask.go), reading through r; nil
	// checks nothing.
	// held is the project's log the call holds through the ledger, which the task
	// ledger joined (the ProjectLog): it reads the task through it, and takes no lock.
	AskOpen func(ctx context.Context, held eventlog.Holding, r store.Reader, project contract.ProjectID, task contract.TaskID) error
}

// Operations runs agents' tool calls as Operations: the write gate, held calls, the
// strip, Requests and decisions. Its state is a projection of the event log, so several
// Operations over one store agree. It is safe for concurrent use.
type Operations struct {
	store      store.Store
	boards     *boards.Cache
	now        func() time.Time
	rand       io.Reader
	log        *slog.Logger
	policies   *policy.Book
	askOpen    func(ctx context.Context, held eventlog.Holding, r store.Reader, project contract.ProjectID, task contract.TaskID) error
	holdBound  time.Duration
	requestTTL time.Duration
	sweepEvery time.Duration
	// hookWaiting and hookPerMinute are the bounds of [Config.MaxHookWaiting] and
	// [Config.MaxHookPerMinute].
	hookWaiting, hookPerMinute int
	// writesPerMinute is the bound of [Config.MaxWritesPerMinute].
	writesPerMinute int
	// artifactRetention is [Config.ArtifactRetention].
	artifactRetention time.Duration

	// drv keeps each project's ledgerState under the project's lock, caught up with its
	// log (docs/architecture.md, "Catch-ups from memory").
	drv *eventlog.Driver[*ledgerState]
	// follow is drv.Follow, which a held call calls once it waits ([Held.Wait]); a test
	// counts its calls.
	follow  func(project contract.ProjectID) (stop func(), err error)
	mu      sync.Mutex                     // guards ledgers; the lock order is in the authority's package doc
	ledgers map[contract.ProjectID]*ledger // created on first use, never removed
	// viewKeys numbers the Views the ledgers keep ([Answer.ViewKey]).
	viewKeys atomic.Uint64
}

// New returns the Operations over d.
func New(d Deps, cfg Config) *Operations {
	o := &Operations{store: d.Store, boards: d.Boards, now: d.Now, rand: d.Rand, log: d.Log, policies: d.Policies, askOpen: d.AskOpen,
		holdBound: cfg.HoldBound, requestTTL: cfg.RequestTTL, sweepEvery: cfg.SweepEvery, ledgers: map[contract.ProjectID]*ledger{},
		hookWaiting:       cmp.Or(max(cfg.MaxHookWaiting, 0), DefaultMaxHookWaiting),
		hookPerMinute:     cmp.Or(max(cfg.MaxHookPerMinute, 0), DefaultMaxHookPerMinute),
		writesPerMinute:   cmp.Or(max(cfg.MaxWritesPerMinute, 0), DefaultMaxWritesPerMinute),
		artifactRetention: cmp.Or(max(cfg.ArtifactRetention, 0), contract.DefaultArtifactRetention)}
	if o.now == nil {
		o.now = time.Now
	}
	if o.rand == nil {
		o.rand = rand.Reader
	}
	if o.holdBound <= 0 {
		o.holdBound = DefaultHoldBound
	}
	if o.requestTTL <= 0 {
		o.requestTTL = DefaultRequestTTL
	}
	if o.sweepEvery <= 0 {
		o.sweepEvery = DefaultSweepEvery
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	pl := d.ProjectLog
	switch {
	case pl == nil && d.Boards != nil:
		pl = d.Boards.Log()
	case pl == nil && d.Policies != nil:
		pl = d.Policies.Log()
	case pl == nil:
		pl = eventlog.NewLog(o.store)
	}
	// A call holding the ledger reads the policies through it, and a Board write takes
	// the ledger through the Board's hold (eventlog.Along): only parts of one log give
	// that.
	if d.Policies != nil && d.Policies.Log() != pl {
		panic("operation: the policy Book is on another project log than the ledger")
	}
	if d.Boards != nil && d.Boards.Log() != pl {
		panic("operation: the Board cache is on another project log than the ledger")
	}
	o.drv = eventlog.Join(pl, newLedgerState)
	o.drv.OnApply(o.applied)
	o.drv.OnFollowError(o.followFailed)
	o.drv.Publish(func(s *ledgerState) any { return s.snapshot() })
	o.follow = o.drv.Follow
	return o
}

// Close stops following the logs for held calls and waits for each goroutine that
// followed one ([eventlog.Driver.Close]): a call still held fails with
// [contract.CodeUnavailable], and one held after Close fails at once. It is safe to call
// more than once.
func (o *Operations) Close() {
	o.drv.Close()
}

// errClosed is why a call held on Operations that were closed ends.
var errClosed = &contract.Error{Code: contract.CodeUnavailable, Teaching: "the authority is shutting down; call again against a running docket serve."}

// nowUTC is the clock, in UTC, at the precision the event log keeps.
func (o *Operations) nowUTC() time.Time { return o.now().UTC().Round(0) }

func (o *Operations) ledger(project contract.ProjectID) *ledger {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.ledgers[project]
	if l == nil {
		l = &ledger{project: project, drv: o.drv, log: o.log}
		o.ledgers[project] = l
	}
	return l
}

// Call is one tool call of an Agent, its input already decoded by
// [contract.DecodeToolInput].
type Call struct {
	Tool  string
	Input any
	// Focus is the session's focused Cases, the first primary.
	Focus []contract.CaseID
	// Delivered reports whether the session was given the outcome of the agent's
	// Operation ordinal in full. Nil means nothing was delivered.
	Delivered func(ordinal int64) bool
	// Progress, when set, is told each state a held call's Operation passes through.
	Progress func(contract.OperationSlot)
	// Pin is what the calling conversation's tasks hold its work to; a write on another
	// Case Type or key is refused with [contract.CodeCasePinned]. The zero pin holds none.
	Pin contract.CasePin
	// TaskBy names who posted the calling conversation's tasks; a Request the call raises
	// records it, and an orchestrator's View shows it beside the request.
	TaskBy []contract.Principal
	// Ask is the task the call's conversation runs, for a docket.ask: the parent of the
	// task it posts, and the depth and fan-out the ask is bounded by (ask.go).
	Ask contract.AskOrigin
	// Conversation is the conversation the call is made in (_meta
	// "docket/conversation"); "" outside one.
	Conversation contract.ConversationID
}

// Answer is what a call produced.
type Answer struct {
	Result contract.ToolResult
	Meta   contract.HostMeta
	// Focus is the session's focus after the call.
	Focus []contract.CaseID
	// Carried lists the Operations whose outcome the answer carries in full; once the
	// answer is sent they count as delivered to the session.
	Carried []int64
	// ViewKey, when not 0, names the View the answer carries: answers with the same
	// ViewKey carry the same View, shared between them, so a reader encodes it once and
	// never changes it. 0 names none.
	ViewKey uint64
}

// refusal is a call refused before it ran.
func refusal(err *contract.Error) contract.ToolResult {
	no := false
	return contract.ToolResult{ErrorCode: err.Code, Teaching: err.Teaching, RequestExecuted: &no}
}

// Refusal returns the answer to a call refused before it reached the authority (its
// arguments did not decode): the error, requestExecuted false, and the current strip and
// View of the caller.
func (o *Operations) Refusal(ctx context.Context, c identity.Caller, focus []contract.CaseID, err *contract.Error) (Answer, error) {
	return o.answer(ctx, c, focus, refusal(err), 0, nil, nil)
}

// Call runs call for the Agent c. QueryBoard and ReadArtifact run at once and are never
// Operations. Any other call passes the write gate and becomes an Operation; its answer
// is held until the Operation settles, waits for a decision, or the hold bound passes
// (then it answers running and nothing is cancelled). When ctx ends while the answer is
// held, Call returns ctx's cause; the Operation goes on.
//
// Call is [Operations.Begin], then the [Held] call's Wait and Answer.
func (o *Operations) Call(ctx context.Context, c identity.Caller, call Call) (Answer, error) {
	h, ans, err := o.Begin(ctx, c, call)
	if h == nil || err != nil {
		return ans, err
	}
	if err := h.Wait(ctx); err != nil {
		return Answer{}, err
	}
	return h.Answer(ctx)
}

// Begin runs call as [Operations.Call] does, up to its hold. A call answered at once (a
// read, a refusal, a decision) comes back as its Answer with a nil Held; an admitted write
// comes back as the Held call, whose Wait holds it. The split lets a server holding
// thousands of calls park each one in a small frame, after Begin's deep ones returned (a
// parked goroutine's stack shrinks only to four times what it uses).
func (o *Operations) Begin(ctx context.Context, c identity.Caller, call Call) (*Held, Answer, error) {
	at := func(a Answer, err error) (*Held, Answer, error) { return nil, a, err }
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return nil, Answer{}, contract.Errorf(contract.CodeForbidden, "only agents call tools; use an agent token (docket agent token).")
	}
	switch in := call.Input.(type) {
	case *contract.QueryBoardInput:
		qctx, span := startSpan(ctx, "board query", call.Tool)
		defer span.End()
		return at(o.query(qctx, c, call, in)) // it acknowledges under the locks it answers under
	case *contract.ReadArtifactInput:
		if err := o.acknowledge(ctx, c, call.Delivered); err != nil {
			return nil, Answer{}, err
		}
		return at(o.readArtifact(ctx, c, call, in))
	case *contract.ApplyActionInput:
		if in.Action == contract.ActionDecide || in.Action == contract.ActionRetry {
			ce, err := o.builtinRefusal(ctx, c, in.Action)
			if err != nil {
				return nil, Answer{}, err
			}
			if ce != nil {
				return at(o.answer(ctx, c, call.Focus, refusal(ce), 0, nil, nil))
			}
		}
		switch in.Action {
		case contract.ActionDecide:
			return at(o.decideCall(ctx, c, call, in))
		case contract.ActionRetry:
			return at(o.retryCall(ctx, c, call, in))
		}
	}
	// A write acknowledges in its own transaction (admit).
	actx, span := startSpan(ctx, "operation admit", call.Tool)
	ad, err := o.admit(actx, c, call)
	span.End()
	if err != nil {
		return nil, Answer{}, err
	}
	if ad.refused != nil {
		return at(o.answer(ctx, c, ad.focus, *ad.refused, 0, nil, &ad.setup))
	}
	return &Held{o: o, c: c, ad: ad, progress: call.Progress}, Answer{}, nil
}

// acknowledge records that the agent saw the outcome of its latest settled Operation:
// it was delivered to this session, and the session made another call since (calls are
// serial, so the client had the answer). From then on the strip shows a summary in place
// of the result. It writes at most once per Operation.
func (o *Operations) acknowledge(ctx context.Context, c identity.Caller, delivered func(int64) bool) error {
	if delivered == nil {
		return nil
	}
	project := c.Projects[0]
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		return err
	}
	return o.acknowledgeLocked(ctx, l, c, delivered)
}

// acknowledgeLocked is acknowledge on a ledger caught up to a head of the log read
// during the call. It writes in the ledger's write sequence at that head
// ([eventlog.Write.KnownHead]), reading no head again: an acknowledgement records that
// an outcome reached the session, which stays true whatever another writer appended
// since, so it needs no head lock to decide on (docs/architecture.md, "The project state
// and its driver"). The ledger applies it from memory after the commit. l must be locked.
func (o *Operations) acknowledgeLocked(ctx context.Context, l *ledger, c identity.Caller, delivered func(int64) bool) error {
	if _, due := l.ackDueLocked(c.ID, delivered); !due {
		return nil // nothing to write: no transaction
	}
	project := c.Projects[0]
	var ordinal int64
	err := l.updateWithLocked(ctx, eventlog.Write{KnownHead: l.seq()}, func(tx store.Tx) error {
		var due bool
		if ordinal, due = l.ackDueLocked(c.ID, delivered); !due {
			return nil
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), o.nowUTC(), event.OpAcknowledgedData(event.Operation{Agent: c.ID, Ordinal: ordinal}))
	})
	return eventlog.RefuseWrite(err, fmt.Sprintf("acknowledge operation %d of %s", ordinal, c.ID), "operation")
}

// ackDueLocked returns the ordinal of the agent's latest settled Operation when its
// outcome is not acknowledged yet and delivered says the session had it. The project's
// ledger must be locked.
func (l *ledgerState) ackDueLocked(agent string, delivered func(int64) bool) (int64, bool) {
	last := l.latestSettledLocked(agent)
	if last == nil || last.acked || !delivered(last.ordinal) {
		return 0, false
	}
	return last.ordinal, true
}

// admit passes call through the write gate and, when it passes, runs it
// on the Board and records it as the agent's next Operation, all in one transaction. A
// gate refusal comes back as refused, with no Operation.
//
// The gate reads at the newest head this process knows, without reading it from the
// store; when another instance changed the Board first, or wrote anything else the gate
// decides on (a policy, an Agent's autonomy, the setup, a profile, the agent's
// Operations), as the admitting transaction finds under the head lock, the call runs
// once more, caught up to a head read: everything it admits is read again under the
// locks.
//
// When another instance admitted an Operation of the same agent first, the call passes the
// gate once more with the next ordinal: ordinals are never reused.
//
// The admissions of one project that arrive while another of its admissions commits are
// admitted together ([Operations.admitBatch]): each passes the gate on its own and is
// refused on its own, and those admitted commit in one transaction, where one commit
// each, each holding the project's lock through it, made them wait for one another.
func (o *Operations) admit(ctx context.Context, c identity.Caller, call Call) (admission, error) {
	a := &admitCall{c: c, call: call}
	project := c.Projects[0]
	err := o.ledger(project).admits.await(newPending(ctx, a), func(batch []*pending[*admitCall]) { o.admitBatch(project, batch) })
	if err != nil {
		return admission{}, err
	}
	return a.out, nil
}

// admitCall is an admission waiting for its batch; out is its admission once its batch
// committed (or refused it).
type admitCall struct {
	c    identity.Caller
	call Call
	out  admission
}

// admission is what passing the write gate produced.
type admission struct {
	ordinal int64             // the call's Operation; 0 when refused
	focus   []contract.CaseID // the session's focus after the call
	setup   board.Setup       // the setup the call ran against, for its answer
	// refused is the gate's refusal, with no Operation; nil when the call was admitted.
	refused *contract.ToolResult
}

// admitBatch admits batch, admissions of project, in one Board write and one
// transaction, and sends each its answer; the calls it leaves for later (an Agent's
// second call, or every call after one that changes more than the Agent's own
// Operations) run in the batches after it, in the order they came.
func (o *Operations) admitBatch(project contract.ProjectID, batch []*pending[*admitCall]) {
	for len(batch) > 0 {
		// The transaction runs on the context of the call that leads it, without its
		// cancellation: the batch's other calls wait for it.
		ctx := context.WithoutCancel(batch[0].ctx)
		var taken, later []*pending[*admitCall]
		name := fmt.Sprintf("admit %s of %s", batch[0].call.call.Tool, batch[0].call.c.Principal())
		if len(batch) > 1 {
			name = fmt.Sprintf("admit %d calls", len(batch))
		}
		err := o.boards.WriteInTx(ctx, project, name, func(w *boards.Write) error {
			var err error
			taken, later, err = o.admitOnce(ctx, w, batch)
			return err
		})
		if err != nil {
			taken, later = batch, nil // the transaction failed: every call of it fails
		}
		for _, p := range taken {
			p.done <- err
		}
		batch = later
	}
}

// admitPlan is a call of a batch that passed the gate: the Operation it admits.
type admitPlan struct {
	p       *pending[*admitCall]
	ctx     context.Context
	ordinal int64
	run     toolRun
	last    *operation // the agent's latest settled Operation, acknowledged with the admission when it is not yet
	now     time.Time
}

// alone reports whether the plan changes more than its agent's own Operations (the
// Board, a Request, a task's ask): a call after it in the batch would pass the gate on
// a state without that change, so it waits for the next batch.
func (a *admitPlan) alone() bool {
	return a.run.change != nil || a.run.request != nil || a.run.ask != nil
}

// asks reports whether call is a docket.ask, which posts a task.
func asks(call Call) bool {
	in, ok := call.Input.(*contract.ApplyActionInput)
	return ok && in.Action == contract.ActionAsk
}

// admitOnce is one attempt of admitBatch in w, on ctx, which no caller's cancellation
// ends: each call of batch passes the gate, at most one call of each agent and none
// after one whose plan is alone; those that pass commit in one transaction. It returns
// the calls it answered (their out set) and those it leaves for the next batch.
func (o *Operations) admitOnce(ctx context.Context, w *boards.Write, batch []*pending[*admitCall]) (taken, later []*pending[*admitCall], err error) {
	project := w.Project()
	l := o.ledger(project)
	l.lockAlong(w.Held())
	defer l.unlock()
	// A plan's Board change is made on the Board in memory by its gate, before the
	// transaction that writes it: when the attempt fails anywhere after (another call's
	// refusal finding the head moved, the Board found stale, the gate's reading moved,
	// the commit refused), the changes are taken back, so memory never keeps a change
	// the log lacks (docs/architecture.md, "The write sequence") and the attempt that
	// runs again passes the gate on the committed Board. A transaction that committed
	// keeps them, also when what follows its commit failed (see commitLocked).
	w.Tentative()
	defer func() { w.EndTentative(ctx, err == nil) }()
	// What the gate reads before its transaction — the Board, the agent's Operations, the
	// setup, the policies in force — is read at the head the Board was caught up to
	// (w.Seq: the newest this process knows, with no store call, docs/architecture.md,
	// "Catch-ups from memory"). The transaction then checks, under the head lock, that
	// no event the gate decides on came since (gateMovedLocked, Fresh, LockFresh); a
	// refusal reads the head once to check the same (Current). Its commit catches up to
	// the head it leaves.
	at := w.Seq()
	if err := l.catchUpLocked(eventlog.WithHead(ctx, project, at), o.store); err != nil {
		return nil, nil, err
	}
	ledgerAt := l.seq()
	var plans []*admitPlan
	refused := false
	agents := map[string]bool{}
	for i, p := range batch {
		if len(plans) > 0 && plans[len(plans)-1].alone() {
			later = append(later, batch[i:]...)
			break
		}
		if agents[p.call.c.ID] {
			later = append(later, p) // the agent's second call passes the gate after its first
			continue
		}
		if len(taken) > 0 && asks(p.call.call) {
			// An ask's own transaction may still refuse it (its task ended, or asked
			// already, since its gate: postAsked), and a refusal there fails every
			// call the transaction holds: an ask is admitted in a batch of its own.
			later = append(later, batch[i:]...)
			break
		}
		agents[p.call.c.ID] = true
		plan, err := o.gate(w, l, p, at)
		if err != nil {
			return nil, nil, err
		}
		taken = append(taken, p)
		if plan == nil {
			refused = true
			continue
		}
		plans = append(plans, plan)
	}
	if refused {
		if err := w.Current(ctx); err != nil {
			return nil, nil, err // the write sequence passes the calls through the gate again
		}
	}
	if len(plans) == 0 {
		return taken, later, nil
	}
	first := plans[0]
	spec := commitSpec{project: project, lockHead: true, bw: w, at: first.now, by: first.p.call.c.Principal()}
	err = o.commitLocked(ctx, spec, l, func(wc *workCommit) error {
		wc.parts = nil
		for _, plan := range plans {
			part := wc.part()
			part.now, part.opBy = plan.now, plan.p.call.c.Principal()
			if err := o.admitIn(part, l, plan, at, ledgerAt); err != nil {
				return err
			}
			wc.parts = append(wc.parts, part)
		}
		return nil
	})
	if errors.Is(err, boards.ErrWroteFirst) {
		return nil, nil, err // the write sequence passes the calls through the gate again
	}
	if err != nil {
		a := first.p.call
		return nil, nil, fmt.Errorf("admit %s of %s: %w", a.call.Tool, a.c.Principal(), eventlog.Refuse(err, "record"))
	}
	return taken, later, nil
}

// gate passes p's call through the write gate on the state l and w hold at the head at,
// and returns its plan, or nil with p's out set to the refusal.
func (o *Operations) gate(w *boards.Write, l *ledger, p *pending[*admitCall], at int64) (*admitPlan, error) {
	c, call := p.call.c, p.call.call
	project := w.Project()
	ctx := context.WithoutCancel(p.ctx)
	gctx := eventlog.WithHead(ctx, project, at)
	setup := l.agentSetupLocked(c.ID)
	focus := call.Focus
	refuse := func(r *contract.ToolResult) (*admitPlan, error) {
		p.call.out = admission{focus: focus, setup: setup, refused: r}
		return nil, nil
	}
	if u := l.unresolvedLocked(c.ID); u != nil {
		r := refusal(contract.Errorf(contract.CodeOperationRunning,
			"your earlier call %s is %s; wait for its outcome (QueryBoard shows it in operations) before writing again", u.label, u.state))
		return refuse(&r)
	}
	last := l.latestSettledLocked(c.ID)
	if last != nil && !last.acked && (call.Delivered == nil || !call.Delivered(last.ordinal)) {
		r := refusal(contract.Errorf(contract.CodePreviousResultUndelivered,
			"the outcome of your earlier call %s (%s) had not reached you; it is in result — read it, then send your call again if it is still needed", last.label, last.state))
		r.Result = last.result
		return refuse(&r)
	}
	if ce := pinRefusal(w.Board(), call.Pin, call.Input); ce != nil {
		r := refusal(ce)
		return refuse(&r)
	}
	if ce := profileRefusal(w.Board(), setup.Allow, call.Input); ce != nil {
		r := refusal(ce)
		return refuse(&r)
	}
	now := o.nowUTC()
	if ce := l.writeBoundLocked(c.ID, c.Name, now, o.writesPerMinute); ce != nil {
		r := refusal(ce)
		return refuse(&r)
	}
	r, person, err := o.autonomyRefusal(gctx, l, project, c.ID, now, call)
	if err != nil {
		return nil, err
	}
	if r != nil {
		return refuse(r)
	}
	ordinal := int64(len(l.ops[c.ID])) + 1
	// Encoded before the call runs on the Board, which it may change in memory: a
	// failure here leaves the Board as it was.
	input, err := json.Marshal(call.Input)
	if err != nil {
		return nil, fmt.Errorf("encode the input of %s: %w", call.Tool, err)
	}
	rctx, span := startSpan(gctx, "board evaluate", call.Tool)
	run := o.run(rctx, l, w.Board(), c, call, setup, l.liveConnsLocked(), now, person)
	span.End()
	run.op.Agent, run.op.Ordinal, run.op.Tool, run.op.Input = c.ID, ordinal, call.Tool, input
	if run.request != nil {
		run.request.Ordinal = ordinal
	}
	run.op.TraceParent = traceParent(ctx)
	p.call.out = admission{ordinal: ordinal, focus: mergeFocus(run.focus, focus), setup: setup}
	return &admitPlan{p: p, ctx: ctx, ordinal: ordinal, run: run, last: last, now: now}, nil
}

// admitIn collects into wc what plan writes, after checking, on the ledger caught up
// inside the transaction under the head lock, that the gate's reading still holds: when
// another instance admitted an Operation of the agent since the gate read the ledger,
// the ordinal is taken and the gate's reading of the agent's strip is stale; and when
// any event the gate decided on came after the head it read at (another instance's
// policy publication, Board change, setup or profile change, or a change of the agent's
// Operations), the gate runs again on what is read again. Either way the write sequence
// passes the batch through the gate again.
func (o *Operations) admitIn(wc *workCommit, l *ledger, plan *admitPlan, at, ledgerAt int64) error {
	c, ctx, now, ordinal, run, last := plan.p.call.c, plan.ctx, plan.now, plan.ordinal, plan.run, plan.last
	project := c.Projects[0]
	wc.change = run.change // first: a refusal below drops the Board it changed
	if int64(len(l.ops[c.ID]))+1 != ordinal {
		return errOrdinalTaken
	}
	if l.gateMovedLocked(c.ID, at, ledgerAt) {
		return errGateMoved
	}
	if last != nil && !last.acked {
		if err := wc.event("", string(c.Principal()), event.OpAcknowledgedData(event.Operation{Agent: c.ID, Ordinal: last.ordinal})); err != nil {
			return err
		}
	}
	wc.writes = append(wc.writes, func(tx store.Tx) error {
		if err := eventlog.Append(ctx, tx, project, c.Principal(), now, event.OpAdmittedData(run.op)); err != nil {
			return err
		}
		if run.request != nil {
			return raise(ctx, tx, run.request)
		}
		if run.ask != nil && run.op.State == contract.OpRunning {
			return o.postAsked(ctx, l, tx, project, c.Principal(), *run.ask, ordinal, now)
		}
		return nil
	})
	return nil
}

// errOrdinalTaken refuses an admission because another instance admitted an Operation of
// the same agent after the gate read the ledger, as the ledger caught up inside the
// admitting transaction shows. The write sequence passes the call through the gate again.
var errOrdinalTaken = fmt.Errorf("the operation ordinal was taken in another instance: %w", boards.ErrWroteFirst)

// errGateMoved refuses an admission because an event the write gate decides on came
// after the head the gate read at, as the ledger caught up inside the admitting
// transaction shows. The write sequence passes the call through the gate again.
var errGateMoved = fmt.Errorf("what the write gate read changed since: %w", boards.ErrWroteFirst)

// gateReads reports whether an event of type typ may change what the write gate reads
// beside the operation ledger, at the head its Board was caught up to: the Board
// ([event.ChangesBoard]) and the policies and autonomy in force ([policy.Moves]).
func gateReads(typ string) bool { return event.ChangesBoard(typ) || policy.Moves(typ) }

// gateMovedLocked reports whether, since the write gate read the Board and the policies
// at seq at and the ledger at seq ledgerAt, the ledger applied an event the gate of
// agent decides on: one of [gateReads], a change of the Connections' setup or of a
// profile, or an event of one of agent's Operations. Another Agent's Operations, leases,
// claims, conversations and tasks never make a gate run again. l must be locked.
func (l *ledgerState) gateMovedLocked(agent string, at, ledgerAt int64) bool {
	return l.gateAt > at || l.setupAt > ledgerAt || l.opsAt[agent] > ledgerAt
}

func mergeFocus(front, rest []contract.CaseID) []contract.CaseID {
	out := slices.Clone(front)
	for _, id := range rest {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) > board.ViewMaxRoots {
		out = out[:board.ViewMaxRoots]
	}
	return out
}

// answer builds the answer to a call of c: res completed with the strip and View, and
// for ordinal > 0 the Operation's own state and result. setup, when not nil, is the one
// the call already read.
func (o *Operations) answer(ctx context.Context, c identity.Caller, focus []contract.CaseID, res contract.ToolResult, ordinal int64, extra json.RawMessage, setup *board.Setup) (Answer, error) {
	return o.reply(ctx, c, reply{focus: focus, res: res, ordinal: ordinal, extra: extra, setup: setup})
}

// reply is what an answer is built from.
type reply struct {
	focus   []contract.CaseID
	res     contract.ToolResult
	ordinal int64           // the call's own Operation, or 0
	extra   json.RawMessage // a read's result, or nil
	setup   *board.Setup    // the setup the call already read, or nil
	// delivered, when set, acknowledges the latest outcome first (see acknowledge).
	delivered func(int64) bool
	// match, when set, reads a result from the Board the View is read from; a
	// *contract.Error it returns refuses the read.
	match func(b *board.Board) (json.RawMessage, error)
	// query names what match reads, when that is a function of the Board alone (a
	// QueryBoard's pattern, Case and limit), so that its result may be kept under the
	// Board's version (matchkeep.go); "" keeps nothing.
	query string
}

// reply builds an answer. An Agent's read of the View, alone or with a pattern's
// matches kept under the Board's version (matchkeep.go), is answered without the
// project's Board lock, from what the Board cache published of the committed Board and
// from the ledger's snapshot, when both cover a head read during the call
// (publishedReply); any other answer, and that one when they do not, is built under the
// Board lock, taken once: the head read that finds the Board fresh also tells the
// ledger whether any event came since its cursor, so an answer on an idle log reads no
// events.
func (o *Operations) reply(ctx context.Context, c identity.Caller, r reply) (Answer, error) {
	project := c.Projects[0]
	if publishable(r) {
		head, ok := eventlog.KnownHead(ctx, project)
		if !ok {
			h, err := o.store.Head(ctx, string(project))
			if err != nil {
				return Answer{}, fmt.Errorf("read the head of %s: %w", project, err)
			}
			// The call's one head read: under the lock the Board is caught up to it
			// without reading another.
			head, ctx = h.Seq, eventlog.WithHead(ctx, project, h.Seq)
		}
		ans, ok, err := o.publishedReply(ctx, c, r, head)
		if err != nil || ok {
			return ans, err
		}
	}
	var ans Answer
	err := o.boards.ReadHeld(ctx, project, func(b *board.Board, head int64, version uint64, h eventlog.Holding) error {
		var err error
		ans, err = o.replyLocked(ctx, c, r, b, head, version, h)
		return err
	})
	if err != nil {
		return Answer{}, err
	}
	return ans, nil
}

// publishable reports whether the answer to r may be read from what the Board cache
// published: it reads the View, and at most a pattern's matches that are kept under the
// Board's version (matchkeep.go). The call's own Operation comes from the ledger's
// snapshot, which holds every Operation (snapshotRead), and a setup the call brought
// names the View it reads as the ledger's setup does; an orchestrator's View is one too:
// the decisions it lists come from the ledger's snapshot (orchestrator.go), added to a
// copy. The Board's lock is the project's, which a claim or any write of the ledger holds
// across its transaction (docs/architecture.md, "The lock order"), so an answer held
// there only when what was published does not cover it.
func publishable(r reply) bool {
	return r.match == nil || r.query != ""
}

// publishedReply answers r without the project's Board lock when the ledger's snapshot
// and the Board the cache published both reflect the log up to head, a head read during
// the call, and the View for the caller's request was built on that Board
// ([boards.Cache.Published]), as were the matches of its pattern, if it has one; ok is
// false when the answer must be built under the lock. So the read never waits for a
// write holding the Board's lock across its transaction (docs/architecture.md, "The
// project state and its driver"), and is as fresh as a read of head: events of a
// transaction still in flight are not in head.
func (o *Operations) publishedReply(ctx context.Context, c identity.Caller, r reply, head int64) (Answer, bool, error) {
	project := c.Projects[0]
	l := o.ledger(project)
	lr, ok := o.snapshotRead(l, c, r, head)
	if !ok {
		return Answer{}, false, nil
	}
	pub, ok, err := o.boards.Published(ctx, project, head)
	if err != nil || !ok {
		return Answer{}, false, err
	}
	br := boardRead{version: pub.Version()}
	if r.match != nil {
		// A pattern's matches on the published Board are those a read under the lock
		// kept under the same version: the Board held the same nodes then.
		if br.matched, ok = l.keptMatch(r.query, br.version); !ok {
			return Answer{}, false, nil
		}
	}
	setup := r.setup
	if setup == nil {
		s := lr.setup()
		setup = &s
	}
	if br.bv, ok = pub.View(board.ViewRequest{Principal: c.Principal(), Focus: r.focus, Setup: *setup}); !ok {
		return Answer{}, false, nil
	}
	ans, err := o.answerFrom(ctx, c, r, br, head, l, lr)
	return ans, err == nil, err
}

// replyLocked is reply on b, which reflects the log up to head and holds what the
// Board cache names version, under the project's lock, which h holds: the ledger and the
// policies are read through it ([ledger.lockAlong]), never locked again. A read that
// writes nothing is answered from the ledger's snapshot when it covers head
// (snapshot.go); any other call catches the ledger up to head.
func (o *Operations) replyLocked(ctx context.Context, c identity.Caller, r reply, b *board.Board, head int64, version uint64, h eventlog.Holding) (Answer, error) {
	project := c.Projects[0]
	l := o.ledger(project)
	br := boardRead{version: version, b: b, keep: publishable(r)}
	l.lockAlong(h)
	defer l.unlock()
	if lr, ok := o.snapshotRead(l, c, r, head); ok {
		lr.held = l // the policies in force, read through the lock h holds
		return o.answerFrom(ctx, c, r, br, head, l, lr)
	}
	if err := l.catchUpToLocked(ctx, o.store, head); err != nil {
		return Answer{}, err
	}
	if r.delivered != nil {
		if err := o.acknowledgeLocked(ctx, l, c, r.delivered); err != nil {
			return Answer{}, err
		}
	}
	lr := ledgerRead{seq: l.seq(), strip: l.stripLocked(c.ID), setup: func() board.Setup { return l.agentSetupLocked(c.ID) }, held: l}
	if c.AgentKind == contract.AgentKindOrchestrator {
		lr.snap = l.snapshot() // its View lists the Requests it may decide
	}
	if p := l.opLocked(c.ID, r.ordinal); p != nil {
		lr.op = p.own()
	}
	return o.answerFrom(ctx, c, r, br, head, l, lr)
}

// boardRead is what an answer reads of the Board: under the Board's lock, or from what
// the Board cache published.
type boardRead struct {
	version uint64       // the Board's version: a View or matches kept under it are of the same Board
	b       *board.Board // the Board, under its lock; nil for a published read, which matches no pattern
	// matched is the matches a published read found kept under version; nil under the
	// lock, where they are read on b (or found kept).
	matched json.RawMessage
	// bv is the View a published read found, shared (the answer changes a copy); nil
	// under the lock, where the View is built on b.
	bv *boards.BoardView
	// keep, under the lock, keeps the View built in what the Board cache published,
	// where the next read of it, and the next Board change, find it.
	keep bool
}

// view returns req's View of the Board read and the roots its focus names, shared with
// later reads: the answer changes a copy.
func (o *Operations) view(project contract.ProjectID, br boardRead, req board.ViewRequest) *boards.BoardView {
	if br.bv != nil {
		return br.bv
	}
	v := boards.ViewOf(br.b, req)
	if br.keep {
		o.boards.Keep(project, br.version, v)
	}
	return v
}

// ledgerRead is what an answer reads of the ledger, under its lock or from its snapshot.
type ledgerRead struct {
	seq   int64                    // the last event of the log it reflects
	strip []contract.OperationSlot // the caller's strip; read only
	op    ownOp                    // what the answer reads of the call's own Operation, or the zero one
	setup func() board.Setup       // the caller's setup, read when its View is built
	// snap is the ledger as a snapshot at seq, which an orchestrator's View lists the
	// Requests from: the published one, or for a read under the lock one taken there;
	// nil for any other caller's read under the lock.
	snap *ledgerSnap
	// held is the ledger for a read under the project's lock (taken through the Board's
	// hold, [ledger.lockAlong], also when the ledger's part comes from the snapshot),
	// through which the View reads the policies in force ([Operations.inForce]); nil for
	// a read that holds no lock.
	held *ledger
}

// snapshotRead returns what an answer to r reads of l, from l's snapshot, when the
// snapshot reflects the log up to head at least (events in a transaction still in
// flight are not in head, so a snapshot at the committed head is exact) and the answer
// needs nothing the snapshot lacks: no acknowledgement to write, and the call's own
// Operation, when it has one, in the snapshot (a call admitted by another instance after
// the snapshot's seq is not). An orchestrator's View lists the Requests from it. So the
// answer to a write whose hold ended does not wait for a claim or a report holding the
// ledger's lock across its transaction, as a QueryBoard does not (docs/architecture.md,
// "The project state and its driver").
func (o *Operations) snapshotRead(l *ledger, c identity.Caller, r reply, head int64) (ledgerRead, bool) {
	snap, ok := o.drv.Snapshot(l.project)
	if !ok || snap.Seq < head {
		return ledgerRead{}, false
	}
	ls := snap.Value.(*ledgerSnap)
	a := ls.agents[c.ID]
	if a.mustAcknowledge(r.delivered) {
		return ledgerRead{}, false
	}
	lr := ledgerRead{seq: snap.Seq, setup: func() board.Setup { return ls.agentSetup(c.ID) }, snap: ls}
	if a != nil {
		lr.strip = a.strip
	}
	if r.ordinal > 0 {
		if lr.op, ok = a.own(r.ordinal); !ok {
			return ledgerRead{}, false
		}
	}
	return lr, true
}

// answerFrom builds the answer to r from br, what it reads of the Board, and lr, what
// it reads of the project's ledger l.
func (o *Operations) answerFrom(ctx context.Context, c identity.Caller, r reply, br boardRead, head int64, l *ledger, lr ledgerRead) (Answer, error) {
	project := c.Projects[0]
	res, extra := r.res, r.extra
	if r.match != nil {
		m, err := br.matched, error(nil)
		if m == nil {
			m, err = l.match(r, br)
		}
		if ce, ok := errors.AsType[*contract.Error](err); ok {
			res, extra = contract.ToolResult{ErrorCode: ce.Code, Teaching: ce.Teaching}, nil
		} else if err != nil {
			return Answer{}, err
		} else {
			extra = m
		}
	}
	slots, op := lr.strip, lr.op
	if r.ordinal > 0 {
		res.Accepted = op.errorCode == "" && op.state != contract.OpRefused && op.state != contract.OpFailed
		res.Result = op.result
		if op.errorCode != "" {
			res.ErrorCode = op.errorCode
			res.Teaching = op.reason
		}
	} else if extra != nil {
		res.Accepted, res.Result = true, extra
	}
	ans := Answer{Focus: r.focus, Meta: contract.HostMeta{AgentID: c.ID, BoardRevision: lr.seq, Ordinal: r.ordinal}}
	res.Operations = make([]contract.OperationEntry, 0, len(slots))
	for _, s := range slots {
		res.Operations = append(res.Operations, s.OperationEntry)
		if s.Result != nil {
			ans.Carried = append(ans.Carried, s.Ordinal)
		}
	}
	if res.ErrorCode == contract.CodePreviousResultUndelivered {
		if last := latestSettledSlot(slots); last != nil && !slices.Contains(ans.Carried, last.Ordinal) {
			ans.Carried = append(ans.Carried, last.Ordinal)
		}
	}
	// An orchestrator's View lists the decisions open to it now, by the clock, and a
	// setup the call brings may differ from the ledger's: their Views are built each
	// time. Every other View is made of the Board, the ledger and the policies in force
	// at head alone, so one kept under the same versions of those is the same View.
	key := viewKey{principal: c.Principal(), board: br.version, head: head, ledger: lr.seq, focus: focusKey(r.focus)}
	kept := r.setup == nil && c.AgentKind != contract.AgentKindOrchestrator
	var roots []contract.FocusedRoot
	if v, ok := l.keptView(key); kept && ok {
		res.View, ans.ViewKey, roots = v.view, v.id, v.roots
	} else {
		setup := r.setup
		if setup == nil {
			s := lr.setup()
			setup = &s
		}
		bv := o.view(project, br, board.ViewRequest{Principal: c.Principal(), Focus: r.focus, Setup: *setup})
		// bv is shared with the reads after this one: what this answer adds to its
		// Actions goes on a copy of the list.
		res.View, roots = bv.View, bv.Roots
		res.View.Actions.Items = slices.Clone(res.View.Actions.Items)
		// The policies the View names are read at the head the Board and the strip show.
		vctx := eventlog.WithHead(ctx, project, head)
		if err := o.orchestratorView(vctx, lr.held, lr.snap, c, &res.View); err != nil {
			return Answer{}, err
		}
		if err := o.askView(vctx, lr.held, c, &res.View); err != nil {
			return Answer{}, err
		}
		blockBuiltins(&res.View, setup.Allow)
		if kept {
			ans.ViewKey = o.viewKeys.Add(1)
			l.keepView(key, keptView{view: res.View, roots: roots, id: ans.ViewKey})
		}
	}
	ans.Meta.FocusedRoots = slices.Clone(roots)
	if r.ordinal > 0 && len(r.focus) > 0 {
		ans.Meta.AffectedCases = r.focus[:1]
	}
	ans.Result = res
	return ans, nil
}

func latestSettledSlot(slots []contract.OperationSlot) *contract.OperationSlot {
	for i := range slots {
		if slots[i].State.Settled() {
			return &slots[i]
		}
	}
	return nil
}

// State returns the state form of c's strip, with ordinals, for initialize and ping.
func (o *Operations) State(ctx context.Context, c identity.Caller) (contract.HostMeta, error) {
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return contract.HostMeta{}, contract.Errorf(contract.CodeForbidden, "only agents hold an operation strip; use an agent token.")
	}
	project := c.Projects[0]
	head, err := o.head(ctx, project)
	if err != nil {
		return contract.HostMeta{}, err
	}
	// From the ledger's snapshot when it covers the head just read (snapshot.go).
	if snap, ok := o.drv.Snapshot(project); ok && snap.Seq >= head {
		strip := []contract.OperationSlot{}
		if a := snap.Value.(*ledgerSnap).agents[c.ID]; a != nil {
			strip = append(strip, a.strip...) // the caller's own, the snapshot's shared
		}
		return contract.HostMeta{AgentID: c.ID, BoardRevision: snap.Seq, State: strip}, nil
	}
	l := o.ledger(project)
	l.lock()
	defer l.unlock()
	if err := l.catchUpToLocked(ctx, o.store, head); err != nil {
		return contract.HostMeta{}, err
	}
	return contract.HostMeta{AgentID: c.ID, BoardRevision: l.seq(), State: l.stripLocked(c.ID)}, nil
}

// errorResult is the stored result of a call the Board refused.
func errorResult(err error) (contract.Code, string, json.RawMessage) {
	ce, ok := errors.AsType[*contract.Error](err)
	if !ok {
		ce = &contract.Error{Code: contract.CodeInternal, Teaching: "the authority failed; the cause is in its log."}
	}
	b, err := json.Marshal(map[string]string{"errorCode": string(ce.Code), "teaching": ce.Teaching})
	if err != nil {
		// Two strings always encode; should they not, the result still says the call failed.
		return contract.CodeInternal, ce.Teaching, json.RawMessage(`{"errorCode":"internal"}`)
	}
	return ce.Code, ce.Teaching, b
}
