package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
	"github.com/docketrun/docket/internal/store"
)

// Defaults for [DispatcherConfig].
const (
	DefaultLeaseTTL = 30 * time.Second
	DefaultPollWait = 10 * time.Second
	DefaultGrantTTL = 5 * time.Minute
	DefaultMaxRows  = 8
	// DefaultMaxWorkers is the most worker instances that hold leases of one Connection
	// at once.
	DefaultMaxWorkers = 32
)

// DispatcherConfig configures [NewDispatcher].
type DispatcherConfig struct {
	// LeaseTTL is how long a worker's lease lasts unless renewed; workers are told to
	// renew after a third of it. Default DefaultLeaseTTL.
	LeaseTTL time.Duration
	// PollWait is how long a Poll without work is held; default DefaultPollWait, and
	// never more than a third of LeaseTTL.
	PollWait time.Duration
	// GrantTTL is how long a served grant may be claimed; default DefaultGrantTTL.
	GrantTTL time.Duration
	// MaxRows is the most rows one Poll serves; default DefaultMaxRows.
	MaxRows int
	// MaxWorkers is the most worker instances holding live leases of one Connection at
	// once; default DefaultMaxWorkers. 1 is one worker per Connection.
	MaxWorkers int
}

// Dispatcher is the authority's side of the worker hop: leases with a
// monotonic generation per Connection, work served only for Tools locked on the
// Connection, claims, and idempotent reports that settle Operations queued by
// [Operations]. Its state is a projection of the event log and, for who holds each
// Connection, the store's lease rows. It is safe for concurrent use.
type Dispatcher struct {
	ops      *Operations
	store    store.Store
	boards   *boards.Cache
	keys     ConnectionKeys
	now      func() time.Time
	log      *slog.Logger
	leaseTTL time.Duration
	pollWait time.Duration
	grantTTL time.Duration
	maxRows  int
	// maxWorkers is the most live leases of one Connection.
	maxWorkers int

	mu      sync.Mutex                                      // guards adverts, pending and reserved; the lock order is in the authority's package doc
	adverts map[contract.ConnectionID]map[int64]advert      // what each Connection's worker offered in its latest Poll here
	pending map[contract.ConnectionID]*batchQueue[*hopCall] // each Connection's claims and reports waiting to commit together
	// reserved holds, by work id, the lease generation a row was last served to by this
	// instance and until when no other worker of its Connection is served it.
	reserved map[string]reservation
	// digests remembers the request digests of the rows shaped here, so that a Claim's
	// shape of a row takes the one its Poll's computed.
	digests *digestMemo
}

// reservation keeps a served row for the worker it was served to for a while, so that the
// Connection's other workers are served other rows. It ends early when that worker's
// lease is no longer live: a row it never claimed is served to another.
type reservation struct {
	gen   int64
	until time.Time
}

// DispatcherDeps is what a Dispatcher reads and writes through.
type DispatcherDeps struct {
	Store  store.Store
	Boards *boards.Cache
	Keys   ConnectionKeys
	Now    func() time.Time // default: time.Now
	Log    *slog.Logger     // default: discards
}

// ConnectionKeys gives a Connection's key in clear, for signing its grants.
type ConnectionKeys interface {
	ConnectionKey(ctx context.Context, id contract.ConnectionID) (identity.Token, error)
}

// NewDispatcher returns the Dispatcher that serves ops's queued Operations to workers.
func NewDispatcher(ops *Operations, deps DispatcherDeps, cfg DispatcherConfig) *Dispatcher {
	d := &Dispatcher{ops: ops, store: deps.Store, boards: deps.Boards, keys: deps.Keys, now: deps.Now, log: deps.Log,
		leaseTTL: cfg.LeaseTTL, pollWait: cfg.PollWait, grantTTL: cfg.GrantTTL, maxRows: cfg.MaxRows,
		maxWorkers: cfg.MaxWorkers, reserved: map[string]reservation{}, digests: newDigestMemo(),
		adverts: map[contract.ConnectionID]map[int64]advert{},
		pending: map[contract.ConnectionID]*batchQueue[*hopCall]{}}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.leaseTTL <= 0 {
		d.leaseTTL = DefaultLeaseTTL
	}
	if d.pollWait <= 0 {
		d.pollWait = DefaultPollWait
	}
	d.pollWait = min(d.pollWait, d.leaseTTL/3)
	if d.grantTTL <= 0 {
		d.grantTTL = DefaultGrantTTL
	}
	if d.maxWorkers <= 0 {
		d.maxWorkers = DefaultMaxWorkers
	}
	if d.maxRows <= 0 {
		d.maxRows = DefaultMaxRows
	}
	return d
}

// nowUTC is the clock, in UTC, at the precision the event log keeps.
func (d *Dispatcher) nowUTC() time.Time { return d.now().UTC().Round(0) }

// WorkID names the work of the agent's Operation ordinal: "<agent>.<ordinal>". It is
// also the grant's invocation and what docket reconcile takes.
func WorkID(agent string, ordinal int64) string { return agent + "." + strconv.FormatInt(ordinal, 10) }

// parseWorkID splits a [WorkID].
func parseWorkID(id string) (string, int64, bool) {
	i := strings.LastIndexByte(id, '.')
	if i <= 0 || len(id) > 200 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	return id[:i], n, err == nil && n > 0
}

// checkWorkerID refuses a workerId that is not 1–64 of [a-z0-9_-].
func checkWorkerID(id string) error {
	ok := len(id) > 0 && len(id) <= 64
	for _, r := range id {
		ok = ok && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}
	if !ok {
		return contract.Errorf(contract.CodeWorkerID, "workerId %.80q must be 1 to 64 of a-z, 0-9, '_' and '-'; mint a random one per process.", id)
	}
	return nil
}

// Poll answers a worker's Poll on conn. Without a generation it
// acquires the lease and answers at once; with one it checks the lease and holds the
// call until work for the advertised, locked Tools is queued or the poll wait passes.
func (d *Dispatcher) Poll(ctx context.Context, conn contract.Connection, req contract.PollRequest) (contract.WorkAnswer, error) {
	if err := checkWorkerID(req.WorkerID); err != nil {
		return contract.WorkAnswer{}, err
	}
	var l *contract.Lease
	var err error
	if req.Generation == nil {
		var ls leaseSet
		if l, ls, err = d.acquire(ctx, conn, req.WorkerID); err != nil {
			return contract.WorkAnswer{}, err
		}
		d.advertise(conn.ID, l, req)
		rows, err := d.serve(ctx, conn, -1, l, ls, req.Tools, req.Max)
		if err == nil && len(rows) == 0 {
			d.explainLogged(ctx, conn.Project, -1)
		}
		return contract.WorkAnswer{Accepted: true, Lease: l, Work: rows}, err
	}
	wait, cancel := context.WithTimeout(ctx, d.pollWait)
	defer cancel()
	// The head is read once, with the first round's lease rows in the same store call;
	// each later round starts from the head its wait returned and reads the rows alone.
	// The round's reads of the queue and its explanation catch up to that head without
	// reading it again; what a round writes is checked in its own transaction.
	rows, head, err := d.store.LeasesHead(ctx, string(conn.Project), string(conn.ID))
	if err != nil {
		return contract.WorkAnswer{}, fmt.Errorf("poll: %w", err)
	}
	seq := head.Seq
	for {
		if rows == nil {
			if rows, err = d.store.Leases(ctx, string(conn.ID)); err != nil {
				return contract.WorkAnswer{}, fmt.Errorf("poll: %w", err)
			}
		}
		var ls leaseSet
		if l, ls, err = d.checked(rows, req.WorkerID, *req.Generation); err != nil {
			return contract.WorkAnswer{}, err
		}
		rows = nil
		d.advertise(conn.ID, l, req)
		rows, err := d.serve(ctx, conn, seq, l, ls, req.Tools, req.Max)
		if err != nil || len(rows) > 0 {
			return contract.WorkAnswer{Accepted: true, Lease: l, Work: rows}, err
		}
		// Nothing to serve here: say why any queued work waits. Its event, when there is
		// one, wakes this Poll once more, and then nothing changed. The queue is explained
		// as the serve read it, at the head this round read.
		d.explainLogged(ctx, conn.Project, seq)
		seq, err = d.store.Wait(wait, string(conn.Project), seq)
		switch {
		case ctx.Err() != nil:
			return contract.WorkAnswer{}, context.Cause(ctx)
		case errors.Is(err, context.DeadlineExceeded):
			return contract.WorkAnswer{Accepted: true, Lease: l, Work: []contract.WorkRow{}}, nil
		case err != nil:
			return contract.WorkAnswer{}, fmt.Errorf("poll: %w", err)
		}
	}
}

// checked returns the lease workerID holds at gen among a Connection's lease rows, or
// its refusal, and the leases of those rows, which the Poll serves under.
func (d *Dispatcher) checked(rows []store.Lease, workerID string, gen int64) (*contract.Lease, leaseSet, error) {
	ls := leasesOf(rows)
	now := d.nowUTC()
	if err := checkLease(ls, workerID, gen, now); err != nil {
		return nil, nil, err
	}
	return d.leaseWire(ls.byGen(gen), now), ls, nil
}

// reserve reports whether row id may be served to the lease gen of conn at now, and if
// so keeps it for that lease until a third of the lease TTL passes: a row served to one
// worker of a Connection is not served to another while that worker's lease is live and
// the reservation holds. live says whether a generation's lease is live.
func (d *Dispatcher) reserve(id string, gen int64, now time.Time, live func(int64) bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.reserved[id]; ok && r.gen != gen && now.Before(r.until) && live(r.gen) {
		return false
	}
	d.reserved[id] = reservation{gen: gen, until: now.Add(d.leaseTTL / 3)}
	return true
}

// unreserve forgets reservations that ended, when there are many: a row claimed or
// settled leaves its reservation behind until then.
func (d *Dispatcher) unreserve(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.reserved) < 4096 {
		return
	}
	for id, r := range d.reserved {
		if !now.Before(r.until) {
			delete(d.reserved, id)
		}
	}
}

// RenewLease extends the lease the worker holds.
func (d *Dispatcher) RenewLease(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) (contract.WorkAnswer, error) {
	l, err := d.renew(ctx, conn, req)
	if err != nil {
		return contract.WorkAnswer{}, err
	}
	return contract.WorkAnswer{Accepted: true, Lease: l}, nil
}

// ReleaseLease gives up the lease the worker holds, at its shutdown.
func (d *Dispatcher) ReleaseLease(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) (contract.WorkAnswer, error) {
	if err := d.release(ctx, conn, req); err != nil {
		return contract.WorkAnswer{}, err
	}
	return contract.WorkAnswer{Accepted: true}, nil
}

// shaped is one queued call as the authority serves it on a Connection: the row's exact
// bytes and the grant fields that do not depend on time.
type shaped struct {
	row    contract.WorkRow
	grant  contract.Grant
	source contract.Source // zero for a source-free Tool
}

// serve returns the rows of project's queued Operations that conn may run: the Tool is
// locked on conn and advertised at the locked digest, and conn has the Source the call
// needs. Each row carries a grant for this worker instance and generation. It serves at
// most want rows when want is positive (the worker's free slots). The queue and conn's
// setup are read from the operation ledger caught up to head, the head the Poll read
// (-1: read it), and a Connection the log shows revoked is refused; ls are conn's leases
// as the Poll read them.
func (d *Dispatcher) serve(ctx context.Context, conn contract.Connection, head int64, l *contract.Lease, ls leaseSet, tools []contract.ToolDescriptor, want int) ([]contract.WorkRow, error) {
	queued, cs, err := d.ops.queuedOn(ctx, conn, head)
	if err != nil || len(queued) == 0 {
		return []contract.WorkRow{}, err
	}
	key, err := d.keys.ConnectionKey(ctx, conn.ID)
	if err != nil {
		return nil, err
	}
	most := d.maxRows
	if want > 0 {
		most = min(most, want)
	}
	now := d.nowUTC()
	d.unreserve(now)
	live := func(gen int64) bool { l := ls.byGen(gen); return l != nil && l.live(now) }
	rows := []contract.WorkRow{}
	for _, q := range queued {
		i := slices.IndexFunc(tools, func(t contract.ToolDescriptor) bool { return string(t.Tool) == q.Request.Tool })
		if i < 0 {
			continue
		}
		s, why, err := d.shape(cs, q, l.WorkerID, l.Generation, tools[i].AdapterDigest)
		if err != nil {
			return nil, err
		}
		if why != nil || s.grant.ToolDigest != tools[i].Digest {
			continue // not locked here, locked at another digest, or no Source for it: [Dispatcher.Explain] says so
		}
		asApproved, err := d.ops.checkServed(ctx, conn.Project, q, servedAs{ToolDigest: s.grant.ToolDigest, Source: sourceRecord(s.source)})
		if err != nil {
			return nil, err
		}
		if !asApproved {
			continue // not what a person approved: it waits for a Connection that serves it so, or asks again
		}
		if !d.reserve(WorkID(q.Agent, q.Ordinal), l.Generation, now, live) {
			continue // served to another worker of the Connection, whose lease still holds it
		}
		s.grant.IssuedAt = d.nowUTC()
		s.grant.ExpiresAt = s.grant.IssuedAt.Add(d.grantTTL)
		if s.row.Grant, err = grant.Sign([]byte(key), s.grant); err != nil {
			return nil, err
		}
		rows = append(rows, s.row)
		if len(rows) == most {
			break
		}
	}
	return rows, nil
}

// unserved is why a Connection cannot run a queued call: a reasonCode and a sentence that
// names the fix, as the Operation shows them while it waits.
type unserved struct {
	code   contract.Code
	reason string
}

// fit returns the locked digest of q's Tool on conn and the Source q runs against there,
// or why conn cannot run q: its Tool is not locked there, or no Source of a type it
// takes can be chosen.
func fit(cs connSetup, q contract.ExecutionRequest) (string, contract.Source, *unserved) {
	lk, ok := cs.rec.lock(q.Tool)
	if !ok {
		return "", contract.Source{}, &unserved{contract.CodeNoToolLocked,
			fmt.Sprintf("tool %s is not locked on Connection %s; lock it there (docket tool lock).", q.Tool, cs.conn.Name)}
	}
	if len(q.SourceTypes) == 0 {
		return lk.Digest, contract.Source{}, nil
	}
	src, why := pickSource(cs, q)
	return lk.Digest, src, why
}

// connSetup is a Connection with its setup as the operation ledger held it at one head
// (setup.go): its Tool locks and its bound Sources, read from the log, not the rows. A
// Poll, a batch of claims or an explanation shapes every row it shapes from one.
type connSetup struct {
	conn contract.Connection
	rec  *connRecord
}

// shape builds the row of q on conn for workerID at gen, or says why conn cannot run it
// ([fit]). The same inputs give the same bytes, so a claim can be checked
// against a fresh shape.
func (d *Dispatcher) shape(cs connSetup, q Dispatch, workerID string, gen int64, adapterDigest string) (shaped, *unserved, error) {
	conn := cs.conn
	toolDigest, src, why := fit(cs, q.Request)
	if why != nil {
		return shaped{}, why, nil
	}
	args, err := json.Marshal(q.Request.Args)
	if err != nil {
		return shaped{}, nil, fmt.Errorf("serve work: encode args: %w", err)
	}
	target, err := json.Marshal(contract.WorkTarget{Source: src.Name, SourceType: src.Type, SourceDigest: src.Digest})
	if err != nil {
		return shaped{}, nil, fmt.Errorf("serve work: encode target: %w", err)
	}
	spec, err := json.Marshal(contract.WorkToolSpec{Tool: contract.ToolID(q.Request.Tool), Digest: toolDigest, Kind: q.Request.Kind})
	if err != nil {
		return shaped{}, nil, fmt.Errorf("serve work: encode tool spec: %w", err)
	}
	rd, err := d.digests.digest(args, target, spec)
	if err != nil {
		return shaped{}, nil, err
	}
	id := WorkID(q.Agent, q.Ordinal)
	g := contract.Grant{Project: conn.Project, Invocation: id, Action: q.Request.Action, Tool: contract.ToolID(q.Request.Tool),
		ToolDigest: toolDigest, Source: src.Name, SourceDigest: src.Digest, Connection: conn.ID, WorkerID: workerID,
		Generation: gen, AdapterDigest: adapterDigest, RequestDigest: rd, PathCheck: q.PathCheck}
	row := contract.WorkRow{ID: id, Project: conn.Project, Invocation: id, Action: q.Request.Action, Args: args, Target: target, ToolSpec: spec,
		TraceParent: q.TraceParent}
	return shaped{row: row, grant: g, source: src}, nil, nil
}

// sourceRecord is the record of src a request vector names, "<name>@sha256:<hex>", or ""
// for a source-free Tool.
func sourceRecord(src contract.Source) string {
	if src.Name == "" {
		return ""
	}
	return src.Name + "@" + src.Digest
}

// pickSource returns the Source of conn a call runs against, among the bound Sources of
// a type the Action takes: the one its "source" argument names; else the one with the
// name its capability declares ([contract.ExecutionRequest.Source]); else the only one.
// When none is bound, or several are and no name picks one, it says why instead.
func pickSource(cs connSetup, req contract.ExecutionRequest) (contract.Source, *unserved) {
	conn, ss := cs.conn, cs.rec.sources
	types := strings.Join(req.SourceTypes, " or ")
	var of []contract.Source // the bound Sources of a type the Action takes
	for _, src := range ss {
		if slices.Contains(req.SourceTypes, src.Type) {
			of = append(of, src)
		}
	}
	byName := func(name string) (contract.Source, bool) {
		i := slices.IndexFunc(of, func(s contract.Source) bool { return s.Name == name })
		if i < 0 {
			return contract.Source{}, false
		}
		return of[i], true
	}
	if v, ok := req.Args["source"]; ok && v.Kind() == contract.ValueString {
		if s, ok := byName(v.Str()); ok {
			return s, nil
		}
		return contract.Source{}, &unserved{contract.CodeNoSourceBound,
			fmt.Sprintf("the call names Source %q, but Connection %s binds no %s Source by that name; bind it (docket source bind).", v.Str(), conn.Name, types)}
	}
	if s, ok := byName(req.Source); ok && req.Source != "" {
		return s, nil
	}
	switch len(of) {
	case 1:
		return of[0], nil
	case 0:
		return contract.Source{}, &unserved{contract.CodeNoSourceBound,
			fmt.Sprintf("Connection %s binds no %s Source for action %s; bind one (docket source bind).", conn.Name, types, req.Action)}
	}
	names := make([]string, len(of))
	for i, s := range of {
		names[i] = s.Name
	}
	why := fmt.Sprintf("Connection %s binds %d %s Sources (%s) and the capability names none of them for action %s; name the one to use in its execution (source = \"…\").",
		conn.Name, len(of), types, strings.Join(names, ", "), req.Action)
	if req.Source != "" {
		why = fmt.Sprintf("Connection %s binds %d %s Sources (%s) and none is named %q, the Source the capability declares for action %s; bind the one to use under that name.",
			conn.Name, len(of), types, strings.Join(names, ", "), req.Source, req.Action)
	}
	return contract.Source{}, &unserved{contract.CodeSourceAmbiguous, why}
}

// Claim takes served work for the worker that holds conn's lease, before it runs.
// The grant must verify under the Connection key against the call as
// it stands now; the Operation moves to at_worker, and no one can claim it again.
//
// Claims and reports of one Connection that arrive while another of its claims or
// reports commits are committed together, in one transaction under one hold of the
// project's lock ([Dispatcher.hopBatch]): a worker claims a Poll's rows at once while it
// reports the rows it ran, and one commit each, each under the project's lock, made them
// wait for one another's commits in turn. Each is still checked on its own and refused
// on its own.
func (d *Dispatcher) Claim(ctx context.Context, conn contract.Connection, req contract.ClaimRequest) (contract.WorkAnswer, error) {
	agent, ordinal, ok := parseWorkID(req.ID)
	if !ok {
		return contract.WorkAnswer{}, errNoWork(req.ID)
	}
	key, err := d.keys.ConnectionKey(ctx, conn.ID)
	if err != nil {
		return contract.WorkAnswer{}, err
	}
	signed, err := grant.Parse(req.Grant)
	if err != nil {
		return contract.WorkAnswer{}, err
	}
	c := newPending(ctx, &hopCall{claim: &claimCall{req: req, agent: agent, ordinal: ordinal, key: key, grant: signed}})
	if err := d.queue(conn).await(c, func(batch []*pending[*hopCall]) { d.hopBatch(conn, batch) }); err != nil {
		return contract.WorkAnswer{}, err
	}
	return contract.WorkAnswer{Accepted: true}, nil
}

// hopBatch commits batch, claims and reports of conn, in one transaction, and gives each
// call its own answer: the claims are checked first, each on its own, then the reports
// ([Dispatcher.reportsIn]), in a Board write when there is a report (a report may apply an
// outcome to the Board). A call refused (or failing) on its own writes nothing and is
// answered its error; a failure of the transaction itself fails every call of it, as it
// failed the one call of a transaction before. When another instance recorded a report
// first (a conflict), a batch with reports runs once more and finds that report: such a
// report is answered as the first one was. A batch of claims alone runs once: a conflict
// answers its claims work_taken.
func (d *Dispatcher) hopBatch(conn contract.Connection, batch []*pending[*hopCall]) {
	// The transaction runs on the context of the call that leads it, without its
	// cancellation: the batch's other calls wait for it, and must not fail because the
	// leader's worker went away.
	ctx := context.WithoutCancel(batch[0].ctx)
	var claims []*claimCall
	var reports []*reportCall
	for _, p := range batch {
		if p.call.claim != nil {
			claims = append(claims, p.call.claim)
		} else {
			reports = append(reports, p.call.report)
		}
	}
	attempts := 1
	if len(reports) > 0 {
		attempts = 2
	}
	var err error
	for range attempts {
		err = d.commitWork(ctx, conn.Project, conn.ID, len(reports) > 0, func(wc *workCommit) error {
			// conn's setup as the ledger, caught up inside this transaction, holds it: a
			// revocation, unlock or rebinding committed before it read the head is seen.
			rec, err := wc.l.connLocked(conn)
			if err != nil {
				return err
			}
			d.claimsIn(wc, connSetup{conn: conn, rec: rec}, conn, claims)
			return d.reportsIn(ctx, wc, conn, reports)
		})
		if !errors.Is(err, store.ErrConflict) {
			break
		}
	}
	for _, p := range batch {
		if c := p.call.claim; c != nil {
			p.done <- claimAnswer(c, err)
		} else {
			p.done <- reportAnswer(p.call.report, err)
		}
	}
}

// claimsIn checks each of claims against the state wc locked and collects what it writes
// into wc; one refused (or failing) alone collects nothing and keeps its error.
func (d *Dispatcher) claimsIn(wc *workCommit, cs connSetup, conn contract.Connection, claims []*claimCall) {
	taken := map[string]bool{} // ids claimed earlier in this batch
	for _, c := range claims {
		c.err = nil
		events, ops := len(wc.events), len(wc.ops)
		if err := d.claimIn(wc, cs, conn, c, taken); err != nil {
			// Refused (or failed) alone, as it would be in a transaction of its own:
			// what it collected is dropped, and the others commit.
			c.err = err
			wc.events, wc.ops = wc.events[:events], wc.ops[:ops]
			continue
		}
		taken[c.req.ID] = true
	}
}

// claimAnswer is claim c's answer once its batch's transaction ended with err.
func claimAnswer(c *claimCall, err error) error {
	switch {
	case errors.Is(err, store.ErrConflict):
		return contract.Errorf(contract.CodeWorkTaken, "work %s was claimed by another call at the same moment; poll for other work.", c.req.ID)
	case err != nil:
		return err
	}
	return c.err
}

// claimIn checks claim c against the state wc locked and collects its event and its
// Operation's change into wc; taken holds the ids this transaction claims already.
func (d *Dispatcher) claimIn(wc *workCommit, cs connSetup, conn contract.Connection, c *claimCall, taken map[string]bool) error {
	req := c.req
	if err := checkLease(wc.leases, req.WorkerID, req.Generation, wc.now); err != nil {
		return err
	}
	op := wc.l.opLocked(c.agent, c.ordinal)
	if op == nil || op.execution == nil {
		return errNoWork(req.ID)
	}
	if _, claimed := wc.l.claims[req.ID]; claimed || taken[req.ID] || op.state != contract.OpRunning || op.stage != contract.StageNotDispatched {
		return contract.Errorf(contract.CodeWorkTaken, "work %s was already claimed or is no longer queued; poll for other work.", req.ID)
	}
	s, why, err := d.shape(cs, Dispatch{Agent: c.agent, Ordinal: c.ordinal, Request: *op.execution}, req.WorkerID, req.Generation, c.grant.Unverified().AdapterDigest)
	if err != nil {
		return err
	}
	if why != nil {
		return contract.Errorf(contract.CodeGrantMismatch, "work %s can no longer run on this Connection (its Tool lock or Source changed); poll again.", req.ID)
	}
	if _, err := c.grant.Verify([]byte(c.key), s.grant, wc.now); err != nil {
		return fmt.Errorf("claim %s: %w", req.ID, err)
	}
	by := contract.NewPrincipal(contract.PrincipalTool, op.execution.Tool)
	ce := event.WorkClaimedData{Work: req.ID, Agent: c.agent, Ordinal: c.ordinal, Connection: conn.ID, WorkerID: req.WorkerID,
		Generation: req.Generation, GrantDigest: grant.Digest([]byte(req.Grant))}
	if s.source.Name != "" {
		ce.Source = &s.source
	}
	if err := wc.event("claim-"+req.ID, string(by), ce); err != nil {
		return err
	}
	wc.opAs(event.Operation{Agent: c.agent, Ordinal: c.ordinal, State: contract.OpRunning, Stage: contract.StageAtWorker}, by)
	return nil
}

func errNoWork(id string) error {
	return contract.Errorf(contract.CodeWorkNotFound, "work %.80q was never served to this Connection; claim and report only ids a Poll returned.", id)
}

// reportDigest is the digest a report is remembered by: sha256 over its JSON. A receipt
// retry sends the same bytes, so it has the same digest.
func reportDigest(r contract.ReportRequest) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encode report: %w", err)
	}
	return contract.Sum(b).String(), nil
}
