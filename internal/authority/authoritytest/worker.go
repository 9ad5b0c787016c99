package authoritytest

import (
	"context"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// Worker stands in for a docket worker on one Connection: it settles the Operations an
// Agent's calls start over the Dispatcher's Poll, Claim and Report — the path a real
// worker's reports take, grants and leases included — without running an adapter. Tests
// of what sits above the authority use it to play the worker between an Agent's calls.
type Worker struct {
	d     *operation.Dispatcher
	conn  contract.Connection
	tools []contract.ToolDescriptor
	vault []string
	lease contract.Lease
}

// WorkerOptions says what the Connection holds. Tools are locked at their Digest and
// advertised by every poll; each Source is bound as given.
type WorkerOptions struct {
	Connection string // default "test"
	Sources    []contract.Source
	Tools      []contract.ToolDescriptor
	LeaseTTL   time.Duration // default a minute; the Worker never renews its lease
	// LockAdvertised locks each Tool as `docket tool lock` without a digest does, after
	// the first Poll advertised it, so its lock keeps the descriptor and a Tool that
	// states its params is a direct Action (docs/workers.md, "Direct Actions").
	LockAdvertised bool
	// Approvals, by Tool id, is the approval each Tool is locked with under
	// LockAdvertised; a Tool not named takes the default of its kind.
	Approvals map[string]string
	// VaultSources are the Source names every Poll says the worker's vault holds.
	VaultSources []string
}

// settleWait bounds how long Settle polls for an Operation's work to be served.
const settleWait = 10 * time.Second

// NewWorker creates the Connection o describes in project "default" as admin, with a
// Dispatcher over ops, and takes the Connection's lease.
func NewWorker(t testing.TB, a *authority.Authority, admin identity.Caller, ops *authority.Operations, o WorkerOptions) *Worker {
	t.Helper()
	ctx := t.Context()
	if o.Connection == "" {
		o.Connection = "test"
	}
	ck, err := a.Directory().CreateConnection(ctx, admin, "default", contract.CreateConnectionRequest{Name: o.Connection})
	if err != nil {
		t.Fatalf("CreateConnection(%s): %v", o.Connection, err)
	}
	for _, s := range o.Sources {
		if _, err := a.Directory().BindSource(ctx, admin, "default", o.Connection, s); err != nil {
			t.Fatalf("BindSource(%s): %v", s.Name, err)
		}
	}
	lock := func() {
		for _, td := range o.Tools {
			l := contract.ToolLock{Tool: string(td.Tool), Digest: td.Digest, Approval: o.Approvals[string(td.Tool)]}
			if o.LockAdvertised {
				l.Digest = ""
			}
			if _, err := a.LockTool(ctx, admin, "default", o.Connection, l); err != nil {
				t.Fatalf("LockTool(%s): %v", td.Tool, err)
			}
		}
	}
	if !o.LockAdvertised {
		lock()
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = time.Minute
	}
	w := &Worker{conn: ck.Connection, tools: o.Tools, vault: o.VaultSources,
		d: authority.NewDispatcher(ops, operation.DispatcherConfig{LeaseTTL: o.LeaseTTL, PollWait: time.Millisecond})}
	ans, err := w.d.Poll(ctx, w.conn, w.poll(nil))
	if err != nil || ans.Lease == nil {
		t.Fatalf("first Poll of %s = %+v, %v; want a lease", o.Connection, ans, err)
	}
	w.lease = *ans.Lease
	if o.LockAdvertised {
		lock()
	}
	return w
}

// poll is the worker's Poll under gen (nil: the startup Poll).
func (w *Worker) poll(gen *int64) contract.PollRequest {
	id := "wkr-test"
	if gen != nil {
		id = w.lease.WorkerID
	}
	return contract.PollRequest{WorkerID: id, Generation: gen, Tools: w.tools, VaultSources: w.vault}
}

// Connection is the Connection the Worker serves.
func (w *Worker) Connection() contract.Connection { return w.conn }

// Settle reports the agent's Operation ordinal done with rows, as a worker that ran it
// would. It fails t when the work is not served within a few seconds or a hop call is
// refused.
func (w *Worker) Settle(t testing.TB, agent string, ordinal int64, rows ...contract.Args) {
	t.Helper()
	if rows == nil {
		rows = []contract.Args{}
	}
	w.report(t, agent, ordinal, func(r *contract.ReportRequest) {
		r.OK, r.Result = true, &contract.WorkResult{Rows: rows}
	})
}

// Fail reports the agent's Operation ordinal failed with code and reason: a known
// failure, with no effect.
func (w *Worker) Fail(t testing.TB, agent string, ordinal int64, code contract.Code, reason string) {
	t.Helper()
	w.report(t, agent, ordinal, func(r *contract.ReportRequest) { r.Code, r.Reason = code, reason })
}

// SettleAll reports done every Operation the Connection is served, with the rows rowsOf
// gives for its work id, until a poll serves nothing more; it returns how many it
// settled. A poll serves a bounded batch, so this is how a test settles many at once.
func (w *Worker) SettleAll(t testing.TB, rowsOf func(workID string) []contract.Args) int {
	t.Helper()
	ctx := t.Context()
	gen := w.lease.Generation
	n := 0
	for {
		ans, err := w.d.Poll(ctx, w.conn, w.poll(&gen))
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if len(ans.Work) == 0 {
			return n
		}
		for _, row := range ans.Work {
			w.run(ctx, t, row, func(r *contract.ReportRequest) {
				r.OK, r.Result = true, &contract.WorkResult{Rows: rowsOf(row.ID)}
			})
			n++
		}
	}
}

func (w *Worker) report(t testing.TB, agent string, ordinal int64, fill func(*contract.ReportRequest)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), settleWait)
	defer cancel()
	row, err := w.served(ctx, operation.WorkID(agent, ordinal))
	if err != nil {
		t.Fatalf("settle operation %d of %s: %v", ordinal, agent, err)
	}
	w.run(ctx, t, row, fill)
}

// Served polls until the work of the agent's Operation ordinal is served and returns
// its row, unclaimed, for a test that claims it itself ([Worker.Claim]).
func (w *Worker) Served(t testing.TB, agent string, ordinal int64) contract.WorkRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), settleWait)
	defer cancel()
	row, err := w.served(ctx, operation.WorkID(agent, ordinal))
	if err != nil {
		t.Fatalf("serve operation %d of %s: %v", ordinal, agent, err)
	}
	return row
}

// Claim claims a served row under the Worker's lease and returns the refusal, if any.
func (w *Worker) Claim(ctx context.Context, row contract.WorkRow) error {
	_, err := w.d.Claim(ctx, w.conn, contract.ClaimRequest{ID: row.ID, WorkerID: w.lease.WorkerID, Generation: w.lease.Generation, Grant: row.Grant})
	return err
}

// run claims row and reports it as fill says.
func (w *Worker) run(ctx context.Context, t testing.TB, row contract.WorkRow, fill func(*contract.ReportRequest)) {
	t.Helper()
	if _, err := w.d.Claim(ctx, w.conn, contract.ClaimRequest{ID: row.ID, WorkerID: w.lease.WorkerID, Generation: w.lease.Generation, Grant: row.Grant}); err != nil {
		t.Fatalf("claim %s: %v", row.ID, err)
	}
	r := contract.ReportRequest{ID: row.ID, WorkerID: w.lease.WorkerID, Generation: w.lease.Generation, Grant: row.Grant}
	fill(&r)
	if _, err := w.d.Report(ctx, w.conn, r); err != nil {
		t.Fatalf("report %s: %v", row.ID, err)
	}
}

// served polls until the work id is served, as a worker's long poll would.
func (w *Worker) served(ctx context.Context, id string) (contract.WorkRow, error) {
	gen := w.lease.Generation
	for {
		ans, err := w.d.Poll(ctx, w.conn, w.poll(&gen))
		if err != nil {
			return contract.WorkRow{}, err
		}
		for _, row := range ans.Work {
			if row.ID == id {
				return row, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return contract.WorkRow{}, context.Cause(ctx)
		}
	}
}

// Poll polls once under the Worker's lease and returns the answer or the refusal.
func (w *Worker) Poll(ctx context.Context) (contract.WorkAnswer, error) {
	gen := w.lease.Generation
	return w.d.Poll(ctx, w.conn, w.poll(&gen))
}

// Report reports a claimed row done with no rows and returns the refusal, if any.
func (w *Worker) Report(ctx context.Context, row contract.WorkRow) error {
	_, err := w.d.Report(ctx, w.conn, contract.ReportRequest{ID: row.ID, WorkerID: w.lease.WorkerID, Generation: w.lease.Generation,
		Grant: row.Grant, OK: true, Result: &contract.WorkResult{Rows: []contract.Args{}}})
	return err
}

// Renew renews the Worker's lease and returns the refusal, if any.
func (w *Worker) Renew(ctx context.Context) error {
	ans, err := w.d.RenewLease(ctx, w.conn, contract.LeaseRequest{WorkerID: w.lease.WorkerID, Generation: w.lease.Generation})
	if err == nil && ans.Lease != nil {
		w.lease = *ans.Lease
	}
	return err
}

// Release gives up the Worker's lease and returns the refusal, if any.
func (w *Worker) Release(ctx context.Context) error {
	_, err := w.d.ReleaseLease(ctx, w.conn, contract.LeaseRequest{WorkerID: w.lease.WorkerID, Generation: w.lease.Generation})
	return err
}
