package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/docketrun/docket/internal/contract"
)

// Defaults for [RunConfig].
const (
	DefaultRetryDelay     = time.Second
	DefaultReportPatience = 10 * time.Minute
	DefaultReleaseLimit   = 5 * time.Second
	// DefaultParallel is as many rows as one Poll serves by default, so a worker takes
	// a whole batch at once.
	DefaultParallel = 8
)

// RunConfig configures a [Runner].
type RunConfig struct {
	Hop      *Hop      // required
	Executor *Executor // required
	WorkerID string    // required: random per process, 1–64 of [a-z0-9_-]
	Logger   *slog.Logger
	// RetryDelay is the wait before sending a call again whose answer was lost, or
	// before asking again for a lease another instance holds; default DefaultRetryDelay.
	RetryDelay time.Duration
	// ReportPatience bounds how long a report is re-sent (the same bytes) while the
	// authority is unreachable; default DefaultReportPatience.
	ReportPatience time.Duration
	// Tracer traces each row's execution in the trace the row was served in; default a
	// no-op provider.
	Tracer trace.TracerProvider
	// Parallel bounds the served rows claimed and run at once; default DefaultParallel.
	// Each is still claimed before it runs and reported after, once.
	Parallel int
}

// Runner is the worker's loop: it acquires the Connection's lease,
// advertises its Tools, and for each served row verifies the grant, claims, runs once
// and reports. It never listens and never runs anything twice.
type Runner struct {
	cfg    RunConfig
	log    *slog.Logger
	tracer trace.Tracer
}

// NewRunner returns a Runner, or an error naming a missing field.
func NewRunner(cfg RunConfig) (*Runner, error) {
	if cfg.Hop == nil || cfg.Executor == nil || cfg.WorkerID == "" {
		return nil, errors.New("new runner: a hop, an executor and a worker id are required")
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	if cfg.ReportPatience <= 0 {
		cfg.ReportPatience = DefaultReportPatience
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Tracer == nil {
		cfg.Tracer = noop.NewTracerProvider()
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultParallel
	}
	return &Runner{cfg: cfg, log: cfg.Logger.With(logWorker, cfg.WorkerID), tracer: cfg.Tracer.Tracer("github.com/docketrun/docket/internal/worker")}, nil
}

// Run serves work until ctx ends, then releases the lease and returns nil. It returns
// an error when the authority refuses the Connection key, or another refusal that
// acquiring anew cannot fix.
func (r *Runner) Run(ctx context.Context) error {
	for {
		l, rows, err := r.acquire(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		r.log.InfoContext(ctx, "lease acquired", logGeneration, l.Generation)
		lost := r.serve(ctx, *l, rows)
		if lost == nil {
			r.release(ctx, *l)
			return nil
		}
		r.log.WarnContext(ctx, "lease lost; acquiring anew", logGeneration, l.Generation, logErr, lost)
	}
}

// acquire sends the startup Poll until it is answered with a lease. A lease another
// instance holds is asked for again after the retry delay.
func (r *Runner) acquire(ctx context.Context) (*contract.Lease, []contract.ServedRow, error) {
	body, err := Body(contract.WorkOperation{Kind: contract.WorkPoll, Poll: &contract.PollRequest{
		WorkerID: r.cfg.WorkerID, Tools: r.descriptors(), VaultSources: r.cfg.Executor.VaultNames()}})
	if err != nil {
		return nil, nil, err
	}
	for {
		// The same startup bytes each time: the authority counts them as one acquisition.
		a, err := r.cfg.Hop.Send(ctx, body)
		ce, refused := errors.AsType[*contract.Error](err)
		switch {
		case err == nil && a.Lease != nil:
			return a.Lease, rowsOf(a), nil
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case errors.Is(err, ErrUnreachable), refused && ce.Code == contract.CodeLeaseHeld:
			r.log.InfoContext(ctx, "waiting for a lease", logErr, err)
		case err == nil:
			return nil, nil, fmt.Errorf("acquire lease: the authority answered without a lease")
		default:
			return nil, nil, fmt.Errorf("acquire lease: %w", err)
		}
		if !r.wait(ctx, r.cfg.RetryDelay) {
			return nil, nil, ctx.Err()
		}
	}
}

func (r *Runner) descriptors() []contract.ToolDescriptor {
	d := r.cfg.Executor.Descriptors()
	if d == nil {
		d = []contract.ToolDescriptor{}
	}
	return d
}

// rowsOf returns the served rows of a, each decoded on its own.
func rowsOf(a Answer) []contract.ServedRow { return a.Served }

// serve works under lease l until ctx ends (it returns nil) or the lease is lost (it
// returns why). A renewer keeps the lease alive meanwhile, long executions included.
func (r *Runner) serve(ctx context.Context, l contract.Lease, rows []contract.ServedRow) error {
	lctx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	var wg sync.WaitGroup
	wg.Go(func() { r.renew(lctx, l, lose) })
	defer wg.Wait()
	gen := l.Generation
	// Each Poll says what the worker offers — the Tools of the manifest in use then — and
	// which Sources its vault holds as they are then: a manifest reloaded or a vault
	// replaced (Executor.SetVault) while the lease is held shows on the next Poll.
	// It asks for no more rows than it has free slots (max): the rest go to the
	// Connection's other workers.
	//
	// The body is encoded once per manifest, vault and max under the lease, and sent
	// again while they stay: encoding every Tool's descriptor for every Poll was 2 % of
	// the worker's CPU in BenchmarkWorker_EndToEnd.
	type pollKey struct {
		m   *Manifest
		v   *Vault
		max int
	}
	polls := map[pollKey][]byte{}
	pollBody := func(max int) ([]byte, error) {
		e := r.cfg.Executor
		k := pollKey{m: e.manifest.Load(), v: e.vault.Load(), max: max}
		if b, ok := polls[k]; ok {
			return b, nil
		}
		tools := e.descriptorsOf(k.m)
		if tools == nil {
			tools = []contract.ToolDescriptor{}
		}
		b, err := Body(contract.WorkOperation{Kind: contract.WorkPoll, Poll: &contract.PollRequest{
			WorkerID: r.cfg.WorkerID, Generation: &gen, Tools: tools, VaultSources: k.v.Names(), Max: max}})
		if err != nil {
			return nil, err
		}
		if len(polls) >= maxPollBodies {
			clear(polls) // manifests and vaults replaced many times under one lease
		}
		polls[k] = b
		return b, nil
	}
	if _, err := pollBody(0); err != nil {
		return err
	}
	// refused holds the rows this worker refused to claim, by id and grant: the authority
	// serves them again until a person acts, and they are not worth a log line each time.
	refused := map[string]bool{}
	p := newPipeline(r.cfg.Parallel)
	// Every row started here reports before serve returns (and the lease is released).
	defer p.running.Wait()
	for {
		started := r.startRows(ctx, lctx, l, rows, lose, refused, p)
		if lctx.Err() != nil {
			break
		}
		if len(rows) > 0 && !started && !r.wait(lctx, r.cfg.RetryDelay) {
			break // only refused rows: do not poll in a tight loop
		}
		// Poll again while rows still run, once a slot is free for what it serves and
		// every claim sent has its answer: a row whose claim is unanswered is still
		// queued, and the Poll would serve it again.
		if !p.ready(lctx) {
			break
		}
		poll, err := pollBody(p.free())
		if err != nil {
			return err
		}
		a, err := r.cfg.Hop.Send(lctx, poll)
		switch {
		case err == nil:
			rows = rowsOf(a)
			continue
		case lctx.Err() != nil:
		case isLeaseLoss(err):
			lose(err)
		case errors.Is(err, ErrUnreachable):
			r.log.WarnContext(ctx, "poll unanswered", logErr, err)
			r.wait(lctx, r.cfg.RetryDelay)
		default:
			lose(fmt.Errorf("poll: %w", err))
		}
		rows = nil
		if lctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return context.Cause(lctx)
}

// pipeline is what a Runner has started under one lease: a slot per row running (at
// most Parallel), the rows whose claim is not answered yet, and the ids of those not yet
// reported, so a row is never started twice.
type pipeline struct {
	slots chan struct{}
	// reports bounds the calls that have run and whose report has no answer yet: a call
	// frees its slot once it has run, so without it a slow commit at the authority would
	// let the worker run call after call whose outcome is not recorded yet, each one more
	// a SIGKILL leaves to be settled as unknowable. With it, at most --parallel calls are
	// claimed or running and at most --parallel more wait for their report's answer.
	reports  chan struct{}
	claiming sync.WaitGroup // rows whose claim has no answer yet
	running  sync.WaitGroup // rows not yet reported
	mu       sync.Mutex
	inflight map[string]bool // ids of the rows started and not yet reported; guarded by mu
}

// free returns how many of p's slots are free now: what a Poll asks for, so that the
// rows served beyond them go to the Connection's other workers.
func (p *pipeline) free() int { return cap(p.slots) - len(p.slots) }

func newPipeline(parallel int) *pipeline {
	return &pipeline{slots: make(chan struct{}, parallel), reports: make(chan struct{}, parallel), inflight: map[string]bool{}}
}

// ready waits until every claim sent has its answer and a slot is free, and reports
// false when lctx ends first. Only the serve loop takes slots, so a slot it sees free
// stays free until it takes one.
func (p *pipeline) ready(lctx context.Context) bool {
	p.claiming.Wait() // a claim is sent on lctx, so it ends when lctx does
	select {
	case p.slots <- struct{}{}:
		<-p.slots
		return true
	case <-lctx.Done():
		return false
	}
}

// start marks id started, or reports false when it already runs here.
func (p *pipeline) start(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight[id] {
		return false
	}
	p.inflight[id] = true
	return true
}

func (p *pipeline) done(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inflight, id)
}

// isLeaseLoss reports whether err tells the worker to drop its lease.
func isLeaseLoss(err error) bool {
	code := contract.CodeOf(err)
	return code == contract.CodeLeaseExpired || code == contract.CodeLeaseSuperseded
}

// renew renews l every heartbeatAfterMs until ctx ends. A refusal loses the lease; an
// authority that stays unreachable past the lease's expiry loses it too.
func (r *Runner) renew(ctx context.Context, l contract.Lease, lose context.CancelCauseFunc) {
	every := time.Duration(l.HeartbeatAfterMs) * time.Millisecond
	if every <= 0 {
		every = time.Second
	}
	body, err := Body(contract.WorkOperation{Kind: contract.WorkRenewLease, RenewLease: &contract.LeaseRequest{
		WorkerID: r.cfg.WorkerID, Generation: l.Generation}})
	if err != nil {
		lose(err)
		return
	}
	// The lease's remaining life, by the worker's own clock, so clocks that disagree do
	// not matter.
	ttl := l.ExpiresAt.Sub(l.ServerTime)
	deadline := time.Now().Add(ttl)
	for r.wait(ctx, every) {
		a, err := r.cfg.Hop.Send(ctx, body)
		switch {
		case err == nil && a.Lease != nil:
			deadline = time.Now().Add(a.Lease.ExpiresAt.Sub(a.Lease.ServerTime))
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrUnreachable) && time.Now().Before(deadline):
			r.log.WarnContext(ctx, "renewal unanswered", logErr, err)
		default:
			lose(fmt.Errorf("renew lease: %w", err))
			return
		}
	}
}

// startRows starts a Poll's rows, up to Parallel running at once with those started
// before, each as before: verify, claim, run once, report. It returns once each row has
// started or been refused, without waiting for them to report; it waits only for a free
// slot. A row that fails its checks is neither claimed nor run, and is remembered in
// refused; a row already running here is not started again. The run and the report use
// ctx, not the lease's lctx: once claimed, a call finishes and reports even if the lease
// is lost meanwhile (the authority judges that report). It reports whether it started
// any. Rows are distinct Operations, each claimed once, so running them together runs
// nothing twice.
func (r *Runner) startRows(ctx, lctx context.Context, l contract.Lease, rows []contract.ServedRow, lose context.CancelCauseFunc, refused map[string]bool, p *pipeline) bool {
	started := false
	for _, s := range rows {
		if lctx.Err() != nil {
			break // the rest of the batch stays unclaimed
		}
		job := r.prepare(ctx, l, s, refused)
		if job == nil {
			continue
		}
		select {
		case p.slots <- struct{}{}:
		case <-lctx.Done():
			return started // the rest stays unclaimed
		}
		if !p.start(job.Row.ID) {
			<-p.slots
			continue
		}
		started = true
		p.claiming.Add(1)
		p.running.Add(1)
		go func() {
			defer p.running.Done()
			// The slot is freed once the row has run (or will not), before its report
			// is answered: a slot bounds the calls claimed and running here, and a
			// report waiting for the authority's commit runs nothing. Held to the
			// report's answer, each of the --parallel slots spent most of its time
			// waiting for two commits, not running (benchmarks/README.md, "Governed
			// actions…"), and the worker polled for less than it could run.
			// It moves to one of the report places first, so the calls run and not yet
			// recorded stay bounded ([pipeline].reports).
			ran := false
			free := func() {
				if !ran {
					ran = true
					p.reports <- struct{}{}
					<-p.slots
				}
			}
			defer func() {
				if ran {
					<-p.reports
				} else {
					<-p.slots
				}
			}()
			defer p.done(job.Row.ID)
			r.claimAndRun(ctx, lctx, job, lose, p.claiming.Done, free)
		}()
	}
	return started
}

// prepare decodes a served row and checks its grant, or returns nil when the row is
// refused (it is remembered, and not refused again in the log).
func (r *Runner) prepare(ctx context.Context, l contract.Lease, s contract.ServedRow, refused map[string]bool) *Job {
	key := string(s.Raw)
	if refused[key] {
		return nil
	}
	row, err := s.Row, s.Err
	if err != nil {
		row, err = contract.WorkRow{}, rowRefusal(err) // as DecodeRow refuses it
	} else {
		var job *Job
		if job, err = r.cfg.Executor.prepare(row, s.Parts, r.cfg.WorkerID, l.Generation); err == nil {
			return job
		}
	}
	r.log.WarnContext(ctx, "work refused before claiming", logWork, row.ID, logCode, contract.CodeOf(err), logErr, err)
	if len(refused) > maxRefused {
		clear(refused)
	}
	refused[key] = true
	return nil
}

// maxPollBodies bounds the Poll bodies a lease keeps encoded.
const maxPollBodies = 64

// maxRefused bounds the rows a Runner remembers having refused.
const maxRefused = 1024

// claimAndRun claims job, runs it once and reports. It calls claimed once the claim has
// its answer, whatever the answer, and ran once the row has run or will not run, before
// its report is sent.
func (r *Runner) claimAndRun(ctx, lctx context.Context, job *Job, lose context.CancelCauseFunc, claimed, ran func()) {
	row := job.Row
	// The execution continues the trace of the dispatch that served the row; its claim
	// and report carry the execution's context on the hop.
	parent := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": row.TraceParent}))
	_, span := r.tracer.Start(trace.ContextWithRemoteSpanContext(ctx, parent), "worker execute",
		trace.WithAttributes(attribute.String("docket.work", row.ID), attribute.String("docket.action", row.Action)))
	defer span.End()
	ctx = trace.ContextWithSpan(ctx, span)
	lctx = trace.ContextWithSpan(lctx, span)
	claim := job.Claim()
	err := r.claim(lctx, claim)
	claimed()
	if err != nil {
		ran()
	}
	if errors.Is(err, errClaimUnknown) {
		// The claim may have been taken under this worker's live lease, where no sweep
		// settles it: the call is not run, and saying so settles it (docs/workers.md).
		r.log.WarnContext(ctx, "claim answer lost; reported as not run", logWork, row.ID, logErr, err)
		r.report(ctx, r.cfg.Executor.report(job, Outcome{Status: StatusRefused, Code: contract.CodeWorkRefused,
			Reason: "the worker's claim of this call got no answer (the serve it was sent to stopped answering) and another claim of it was refused, so the worker did not run it; nothing ran, and the call may be made again."}))
		return
	}
	if err != nil {
		if isLeaseLoss(err) {
			lose(err)
		}
		r.log.WarnContext(ctx, "claim refused", logWork, row.ID, logCode, contract.CodeOf(err), logErr, err)
		return
	}
	rep := r.cfg.Executor.Run(ctx, job)
	ran()
	r.report(ctx, rep)
}

// errClaimUnknown is a claim whose answer was lost and whose retry was refused
// work_taken: the lost one may have been taken (then the call waits at this worker) or
// another worker's was.
var errClaimUnknown = errors.New("worker: the claim's answer was lost and its retry was refused")

// claim sends claim, and the same bytes again while no answer comes and the lease
// lives: a serve that stops answering (one of several over one store) may have taken it or
// not. A retry the authority accepts is the claim (the first was never taken); one refused
// work_taken is [errClaimUnknown]. A first answer is returned as it is.
func (r *Runner) claim(lctx context.Context, claim contract.ClaimRequest) error {
	body, err := Body(contract.WorkOperation{Kind: contract.WorkClaim, Claim: &claim})
	if err != nil {
		return err
	}
	lost := false
	for {
		_, err := r.cfg.Hop.Send(lctx, body)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrUnreachable) && lctx.Err() == nil:
			lost = true
			r.log.WarnContext(lctx, "claim unanswered; sending the same bytes again", logWork, claim.ID, logErr, err)
			if !r.wait(lctx, r.cfg.RetryDelay) {
				return err
			}
		case lost && contract.CodeOf(err) == contract.CodeWorkTaken:
			return fmt.Errorf("%w: %w", errClaimUnknown, err)
		default:
			return err
		}
	}
}

// report sends rep, and the same bytes again while no answer comes, for at most the
// report patience. It outlives ctx: a receipt is not lost because a signal arrived.
func (r *Runner) report(ctx context.Context, rep contract.ReportRequest) {
	body, err := Body(contract.WorkOperation{Kind: contract.WorkReport, Report: &rep})
	if err != nil {
		r.log.ErrorContext(ctx, "report not encoded", logWork, rep.ID, logErr, err)
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.ReportPatience)
	defer cancel()
	for {
		_, err := r.cfg.Hop.Send(rctx, body)
		switch {
		case err == nil:
			r.log.InfoContext(ctx, "reported", logWork, rep.ID, logStatus, rep.OK)
			return
		case errors.Is(err, ErrUnreachable) && rctx.Err() == nil:
			r.log.WarnContext(ctx, "report unanswered; sending the same bytes again", logWork, rep.ID, logErr, err)
			if !r.wait(rctx, r.cfg.RetryDelay) {
				return
			}
		default:
			r.log.WarnContext(ctx, "report refused", logWork, rep.ID, logCode, contract.CodeOf(err), logErr, err)
			return
		}
	}
}

// release gives the lease back at shutdown, on a context of its own.
func (r *Runner) release(ctx context.Context, l contract.Lease) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultReleaseLimit)
	defer cancel()
	_, err := r.cfg.Hop.Do(rctx, contract.WorkOperation{Kind: contract.WorkReleaseLease, ReleaseLease: &contract.LeaseRequest{
		WorkerID: r.cfg.WorkerID, Generation: l.Generation}})
	if err != nil {
		r.log.WarnContext(ctx, "lease not released; it expires on its own", logErr, err)
		return
	}
	r.log.InfoContext(ctx, "lease released", logGeneration, l.Generation)
}

// wait waits d or until ctx ends; it reports whether d passed.
func (r *Runner) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
