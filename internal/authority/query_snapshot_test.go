package authority_test

import (
	"context"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// pauseStore is a store whose next Update, once armed, stops inside its transaction
// after its function returned, before it commits, until released: a write holding what
// it locked across its transaction, as a slow COMMIT would.
type pauseStore struct {
	store.Store
	mu      sync.Mutex
	armed   bool
	entered chan struct{} // closed when the armed Update stops
	release chan struct{} // closed to let it commit
}

// arm makes the next Update stop before its commit.
func (p *pauseStore) arm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.entered, p.release = true, make(chan struct{}), make(chan struct{})
}

func (p *pauseStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return p.Store.Update(ctx, func(tx store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		p.mu.Lock()
		armed, entered, release := p.armed, p.entered, p.release
		p.armed = false
		p.mu.Unlock()
		if armed {
			close(entered)
			<-release
		}
		return nil
	})
}

// pausedSQLite returns a pauseStore over a fresh SQLite store, closed when the test ends.
func pausedSQLite(t *testing.T) *pauseStore {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &pauseStore{Store: st}
}

// startPaused runs write on a goroutine with ps armed, and returns once write's
// transaction stopped before its commit, with the function that lets it commit (run
// however the test ends) and write's result.
func startPaused(t *testing.T, ps *pauseStore, write func() error) (release func(), done <-chan error) {
	t.Helper()
	ps.arm()
	release = sync.OnceFunc(func() { close(ps.release) })
	t.Cleanup(release)
	out := make(chan error, 1)
	go func() { out <- write() }()
	select {
	case <-ps.entered:
	case err := <-out:
		t.Fatalf("the write returned %v before its transaction paused", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the write's transaction never paused")
	}
	return release, out
}

// servedFetch has a worker of f take a lease and be served one fetch: a row for a test
// to claim while a read runs beside the claim's transaction.
func servedFetch(t *testing.T, f *hopFixture) (*contract.Lease, contract.WorkRow) {
	t.Helper()
	l := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 {
		t.Fatalf("Poll served %d rows, want 1", len(rows))
	}
	return l, rows[0]
}

// answerWithin runs read on its own goroutine and returns its answer, failing the test
// when none comes within a few seconds: what reads during a paused write's transaction,
// and would wait for the lock that write holds if it took it.
func answerWithin[T any](t *testing.T, what string, read func() (T, error)) (T, error) {
	t.Helper()
	type answer struct {
		v   T
		err error
	}
	got := make(chan answer, 1)
	go func() {
		v, err := read()
		got <- answer{v, err}
	}()
	select {
	case a := <-got:
		return a.v, a.err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not answer within 5s: it waits for a lock a write holds across its transaction", what)
		var zero T
		return zero, nil
	}
}

// queryBoard answers the agent's QueryBoard on ops, failing the test when no answer
// comes within a few seconds (the call waits for a lock a paused write holds).
func queryBoard(t *testing.T, ops *authority.Operations, agent identity.Caller) operation.Answer {
	t.Helper()
	ans, err := answerWithin(t, "QueryBoard", func() (operation.Answer, error) {
		return ops.Call(context.Background(), agent, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}})
	})
	if err != nil {
		t.Fatalf("QueryBoard: %v", err)
	}
	return ans
}

// TestOperations_QueryDuringClaim shows that an Agent's QueryBoard does not wait for a
// claim that holds the project's operation ledger across its store transaction: it is
// answered meanwhile from the ledger's snapshot, with the strip as committed (the
// claimed Operation still waiting for a worker, since the claim has not committed), and
// once the claim commits the next QueryBoard shows the Operation at the worker
// (docs/architecture.md, "The project state and its driver").
func TestOperations_QueryDuringClaim(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	l, row := servedFetch(t, f)
	queryBoard(t, f.ops, f.agent) // the View is built, and kept

	release, claimed := startPaused(t, ps, func() error { return f.claim(l, row) })
	during := queryBoard(t, f.ops, f.agent)
	release()
	if err := <-claimed; err != nil {
		t.Fatalf("Claim: %v", err)
	}
	ops := during.Result.Operations
	if len(ops) != 1 || ops[0].State != contract.OpRunning || ops[0].Stage != contract.StageNotDispatched {
		t.Errorf("QueryBoard during the claim's transaction shows %+v, want the fetch running, not dispatched", ops)
	}
	after := queryBoard(t, f.ops, f.agent).Result.Operations
	if len(after) != 1 || after[0].Stage != contract.StageAtWorker {
		t.Errorf("QueryBoard after the claim shows %+v, want the fetch at the worker", after)
	}
}

// TestOperations_SnapshotNotStale shows that the ledger's snapshot never answers past
// the head a call read: another instance over the same store moves an Operation, and
// the next QueryBoard and strip of this instance show it, on both backends.
func TestOperations_SnapshotNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newHopFixtureOn(t, opsFixtureOver(t, s1, time.Millisecond))
			ctx := t.Context()
			other := authority.NewOperations(authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now}),
				operation.Config{})
			f.startup(t, "wkr-a")
			fetched := f.call(t, f.ops, &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a.txt")}})
			before := queryBoard(t, f.ops, f.agent)
			if ops := before.Result.Operations; len(ops) != 1 || ops[0].Stage != contract.StageNotDispatched {
				t.Fatalf("QueryBoard shows %+v, want the fetch not dispatched", ops)
			}
			if err := other.Dispatched(ctx, "default", f.agent.ID, fetched.Meta.Ordinal); err != nil {
				t.Fatalf("the other instance's claim: %v", err)
			}
			after := queryBoard(t, f.ops, f.agent)
			if ops := after.Result.Operations; len(ops) != 1 || ops[0].Stage != contract.StageAtWorker {
				t.Errorf("QueryBoard after another instance's change shows %+v, want the fetch at the worker", ops)
			}
			if after.Meta.BoardRevision <= before.Meta.BoardRevision {
				t.Errorf("QueryBoard after another instance's change answers at %d, want past %d", after.Meta.BoardRevision, before.Meta.BoardRevision)
			}
			if e := f.opState(t); e.Stage != contract.StageAtWorker {
				t.Errorf("the strip after another instance's change shows %+v, want the fetch at the worker", e)
			}
		})
	}
}

// within returns what read answers, failing the test when no answer comes within a few
// seconds (the read waits for a lock a paused write holds) or the answer is an error.
func within[T any](t *testing.T, what string, read func(ctx context.Context) (T, error)) T {
	t.Helper()
	v, err := answerWithin(t, what, func() (T, error) { return read(context.Background()) })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// TestOperations_ListsDuringClaim shows that a member's lists of Operations and of
// Requests, and an orchestrator's QueryBoard, which lists the Requests it may decide, do
// not wait for a claim that holds the project's operation ledger across its store
// transaction: they are answered meanwhile from the ledger's snapshot, as committed (the
// claimed Operation still waiting for a worker), and once the claim commits the next
// list shows the Operation at the worker (docs/architecture.md, "The project state and
// its driver").
func TestOperations_ListsDuringClaim(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	boss := newOrchestrator(t, f.a, f.admin, "boss")
	l := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	// The orchestrator's own mark waits for a person: a Request in the list.
	if _, err := f.ops.Call(t.Context(), boss, operation.Call{Tool: contract.ToolApplyAction,
		Input: &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("x")}}}); err != nil {
		t.Fatal(err)
	}
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 {
		t.Fatalf("Poll served %d rows, want 1", len(rows))
	}
	list := func(ctx context.Context) ([]contract.OperationInfo, error) {
		return f.ops.OperationList(ctx, f.admin, "default", "", false)
	}
	requests := func(ctx context.Context) ([]contract.Request, error) {
		return f.ops.Operations().Requests(ctx, f.admin, "default")
	}
	queryBoard(t, f.ops, boss) // the ledger caught up, and its snapshot published
	before := within(t, "Requests", requests)
	if len(before) != 1 || before[0].State != contract.RequestPending {
		t.Fatalf("Requests lists %+v, want the orchestrator's mark pending", before)
	}

	release, claimed := startPaused(t, ps, func() error { return f.claim(l, rows[0]) })
	during := within(t, "OperationList", list)
	duringReqs := within(t, "Requests", requests)
	orch := queryBoard(t, f.ops, boss)
	release()
	if err := <-claimed; err != nil {
		t.Fatalf("Claim: %v", err)
	}
	fetchOf := func(ops []contract.OperationInfo) contract.OperationInfo {
		for _, op := range ops {
			if op.Agent == contract.AgentID(f.agent.ID) {
				return op
			}
		}
		t.Fatalf("the list %+v has no Operation of %s", ops, f.agent.ID)
		return contract.OperationInfo{}
	}
	if len(during) != 2 {
		t.Errorf("OperationList during the claim's transaction lists %+v, want the fetch and the mark", during)
	}
	if op := fetchOf(during); op.State != contract.OpRunning || op.Stage != contract.StageNotDispatched {
		t.Errorf("OperationList during the claim's transaction shows the fetch %+v, want running, not dispatched", op)
	}
	if !reflect.DeepEqual(duringReqs, before) {
		t.Errorf("Requests during the claim's transaction lists %+v, want %+v", duringReqs, before)
	}
	if ops := orch.Result.Operations; len(ops) != 1 || ops[0].State != contract.OpWaitingForDecision {
		t.Errorf("the orchestrator's QueryBoard during the claim's transaction shows %+v, want its mark waiting for a decision", ops)
	}
	if d := orch.Result.View.Decisions; d == nil || len(d.Items) != 0 {
		t.Errorf("the orchestrator's View lists the decisions %+v, want none (its own request is not its to decide)", d)
	}
	if op := fetchOf(within(t, "OperationList", list)); op.Stage != contract.StageAtWorker {
		t.Errorf("OperationList after the claim shows the fetch %+v, want at the worker", op)
	}
}

// TestOperations_ListsNotStale shows that a member's lists read from the ledger's
// snapshot never answer past the head the read made: another instance over the same
// store decides a Request, and the next lists of Requests and of Operations of this
// instance show it, on both backends.
func TestOperations_ListsNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := opsFixtureOver(t, s1, time.Millisecond)
			ctx := t.Context()
			other := authority.NewOperations(authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now}),
				operation.Config{})
			f.call(t, f.ops, &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("x")}})
			rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].State != contract.RequestPending {
				t.Fatalf("Requests lists %+v, want the mark pending", rs)
			}
			ops, err := f.ops.OperationList(ctx, f.admin, "default", "", false)
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != 1 || ops[0].State != contract.OpWaitingForDecision {
				t.Fatalf("OperationList lists %+v, want the mark waiting for a decision", ops)
			}
			if _, err := other.Operations().Decide(ctx, f.admin, "default", rs[0].ID, contract.Decision{Digest: rs[0].Digest, Verdict: contract.VerdictDeny, Reason: "no"}); err != nil {
				t.Fatalf("the other instance's decision: %v", err)
			}
			rs, err = f.ops.Operations().Requests(ctx, f.admin, "default")
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].State != contract.RequestDenied {
				t.Errorf("Requests after another instance's decision lists %+v, want the mark denied", rs)
			}
			ops, err = f.ops.OperationList(ctx, f.admin, "default", "", false)
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != 1 || ops[0].State != contract.OpRefused {
				t.Errorf("OperationList after another instance's decision lists %+v, want the mark refused", ops)
			}
		})
	}
}

// TestOperations_ListsDuringReport shows the same of a worker's report, which holds the
// Board lock and the operation ledger's across the transaction that applies its outcome
// to the Board: a member's lists and an orchestrator's QueryBoard meanwhile answer with
// the Operation still at the worker, and after the commit with it done.
func TestOperations_ListsDuringReport(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	boss := newOrchestrator(t, f.a, f.admin, "boss")
	l, row := servedFetch(t, f)
	if err := f.claim(l, row); err != nil {
		t.Fatalf("Claim: %v", err)
	}
	list := func(ctx context.Context) ([]contract.OperationInfo, error) {
		return f.ops.OperationList(ctx, f.admin, "default", "", false)
	}
	requests := func(ctx context.Context) ([]contract.Request, error) {
		return f.ops.Operations().Requests(ctx, f.admin, "default")
	}
	queryBoard(t, f.ops, boss) // the ledger caught up, and the Board and its snapshot published

	release, done := startPaused(t, ps, func() error {
		_, err := f.d.Report(context.Background(), f.conn, okReport(l, row, "a.txt"))
		return err
	})
	during := within(t, "OperationList", list)
	within(t, "Requests", requests)
	orch := queryBoard(t, f.ops, boss)
	release()
	if err := <-done; err != nil {
		t.Fatalf("Report: %v", err)
	}
	if len(during) != 1 || during[0].State != contract.OpRunning || during[0].Stage != contract.StageAtWorker {
		t.Errorf("OperationList during the report's transaction lists %+v, want the fetch running at the worker", during)
	}
	if d := orch.Result.View.Decisions; d == nil {
		t.Errorf("the orchestrator's View during the report's transaction lists no decisions, want the (empty) list")
	}
	if after := within(t, "OperationList", list); len(after) != 1 || after[0].State != contract.OpDone {
		t.Errorf("OperationList after the report lists %+v, want the fetch done", after)
	}
}
