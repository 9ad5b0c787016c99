package authority_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
)

// fetchDigest is the digest test.fetch@1 is locked at and advertised with.
const fetchDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// hopFixture is the ops fixture with a Connection "laptop" that has a file Source and
// test.fetch@1 locked, and a Dispatcher over it.
type hopFixture struct {
	*opsFixture
	d    *operation.Dispatcher
	conn contract.Connection
	key  []byte
}

func newHopFixture(t *testing.T) *hopFixture {
	t.Helper()
	return newHopFixtureOn(t, newOpsFixture(t, time.Millisecond))
}

// newHopFixtureOn is newHopFixture over an ops fixture on any store.
func newHopFixtureOn(t *testing.T, of *opsFixture) *hopFixture {
	t.Helper()
	ctx := t.Context()
	f := &hopFixture{opsFixture: of}
	ck, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	f.conn, f.key = ck.Connection, []byte(ck.Key)
	if _, err := f.a.Directory().BindSource(ctx, f.admin, "default", "laptop", contract.Source{Name: "workspace", Type: "file",
		Words: []string{"fetched"}, Tier: contract.TierAttested}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.LockTool(ctx, f.admin, "default", "laptop", contract.ToolLock{Tool: "test.fetch@1", Digest: fetchDigest}); err != nil {
		t.Fatal(err)
	}
	f.d = authority.NewDispatcher(f.ops, operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond})
	return f
}

var fetchTool = []contract.ToolDescriptor{{Tool: "test.fetch@1", Digest: fetchDigest, Adapter: "run",
	AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"file"}}}

// startup acquires a lease for worker with a Poll without a generation.
func (f *hopFixture) startup(t *testing.T, worker string) *contract.Lease {
	t.Helper()
	ans, err := f.d.Poll(t.Context(), f.conn, contract.PollRequest{WorkerID: worker, Tools: fetchTool})
	if err != nil {
		t.Fatalf("startup Poll(%s): %v", worker, err)
	}
	return ans.Lease
}

// fetch queues the agent's fetch of path and returns its work id.
func (f *hopFixture) fetch(t *testing.T, path string) string {
	t.Helper()
	ans := f.call(t, f.ops, &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(path)}})
	if state(ans) != contract.OpRunning {
		t.Fatalf("fetch = %s %+v, want running", ans.Result.ErrorCode, ans.Result.Operations)
	}
	return operation.WorkID(f.agent.ID, ans.Meta.Ordinal)
}

// poll polls under l and returns the rows served.
func (f *hopFixture) poll(t *testing.T, l *contract.Lease, tools []contract.ToolDescriptor) []contract.WorkRow {
	t.Helper()
	gen := l.Generation
	ans, err := f.d.Poll(t.Context(), f.conn, contract.PollRequest{WorkerID: l.WorkerID, Generation: &gen, Tools: tools})
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	return ans.Work
}

func (f *hopFixture) claim(l *contract.Lease, row contract.WorkRow) error {
	_, err := f.d.Claim(context.Background(), f.conn, contract.ClaimRequest{ID: row.ID, WorkerID: l.WorkerID, Generation: l.Generation, Grant: row.Grant})
	return err
}

func (f *opsFixture) opState(t *testing.T) contract.OperationEntry {
	t.Helper()
	st, err := f.ops.Operations().State(t.Context(), f.agent)
	if err != nil {
		t.Fatal(err)
	}
	return st.State[0].OperationEntry
}

func okReport(l *contract.Lease, row contract.WorkRow, path string) contract.ReportRequest {
	return contract.ReportRequest{ID: row.ID, OK: true, Result: &contract.WorkResult{Rows: []contract.Args{{"path": contract.StringValue(path)}}},
		WorkerID: l.WorkerID, Generation: l.Generation, Grant: row.Grant}
}

func TestDispatcher_Walk(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	l := f.startup(t, "wkr-a")
	if again := f.startup(t, "wkr-a"); again.Generation != l.Generation || l.Generation != 1 {
		t.Fatalf("re-sent startup poll = generation %d, first %d; want one acquisition, generation 1", again.Generation, l.Generation)
	}
	id := f.fetch(t, "a.txt")
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("Poll served %+v, want work %s", rows, id)
	}
	// The grant verifies under the Connection key against the exact served bytes.
	rd, err := grant.RequestDigest(rows[0].Args, rows[0].Target, rows[0].ToolSpec)
	if err != nil {
		t.Fatal(err)
	}
	want := contract.Grant{Project: "default", Invocation: id, Action: "fetch", Tool: "test.fetch@1", ToolDigest: fetchDigest,
		Source: "workspace", SourceDigest: mustTarget(t, rows[0]).SourceDigest, Connection: f.conn.ID, WorkerID: "wkr-a",
		Generation: 1, AdapterDigest: "sha256:adad", RequestDigest: rd}
	if _, err := grant.Verify(f.key, rows[0].Grant, want, f.clock.Now()); err != nil {
		t.Fatalf("served grant: %v", err)
	}
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatalf("Claim: %v", err)
	}
	wantCode(t, f.claim(l, rows[0]), contract.CodeWorkTaken)
	if e := f.opState(t); e.State != contract.OpRunning || e.Stage != contract.StageAtWorker {
		t.Fatalf("claimed operation = %+v, want running at_worker", e)
	}
	if got := f.poll(t, l, fetchTool); len(got) != 0 {
		t.Fatalf("claimed work served again: %+v", got)
	}
	rep := okReport(l, rows[0], "a.txt")
	for i := range 2 { // a receipt retry with the same bytes lands once
		if _, err := f.d.Report(ctx, f.conn, rep); err != nil {
			t.Fatalf("Report #%d: %v", i+1, err)
		}
	}
	other := okReport(l, rows[0], "b.txt")
	_, err = f.d.Report(ctx, f.conn, other)
	wantCode(t, err, contract.CodeReportConflict)
	if e := f.opState(t); e.State != contract.OpDone {
		t.Fatalf("reported operation = %+v, want done", e)
	}
	err = f.a.View(ctx, "default", func(b *board.Board) error {
		got, err := b.Query(contract.Atom{Predicate: "fetched"}, "", 10)
		if err != nil {
			return err
		}
		if len(got.Items) != 1 || got.Items[0].Tier != contract.TierAttested || got.Items[0].CreatedBy != "tool:test.fetch@1" {
			t.Errorf("fetched facts = %+v, want one attested fact by tool:test.fetch@1", got.Items)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func mustTarget(t *testing.T, row contract.WorkRow) contract.WorkTarget {
	t.Helper()
	var tg contract.WorkTarget
	if err := json.Unmarshal(row.Target, &tg); err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestDispatcher_ServesOnlyLockedTools: the worker advertises, the authority authorizes.
func TestDispatcher_ServesOnlyLockedTools(t *testing.T) {
	tests := []struct {
		name  string
		tools []contract.ToolDescriptor
		want  int
	}{
		{"locked at its digest", fetchTool, 1},
		{"advertised at another digest", []contract.ToolDescriptor{{Tool: "test.fetch@1", Digest: "sha256:" + fetchDigest[len(fetchDigest)-64:len(fetchDigest)-1] + "0", Kind: "read"}}, 0},
		{"not advertised", nil, 0},
		{"advertised but not locked", []contract.ToolDescriptor{{Tool: "test.send@1", Digest: fetchDigest, Kind: "write"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHopFixture(t)
			l := f.startup(t, "wkr-a")
			f.fetch(t, "a.txt")
			if got := f.poll(t, l, tt.tools); len(got) != tt.want {
				t.Errorf("Poll served %d rows, want %d", len(got), tt.want)
			}
		})
	}
}

// TestDispatcher_Lease: each worker instance of a Connection holds a lease of its own,
// under its own generation, up to the dispatcher's MaxWorkers; one that lapses is
// refused, and its slot goes to the next instance under a new generation.
func TestDispatcher_Lease(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	a := f.startup(t, "wkr-a")
	b := f.startup(t, "wkr-b")
	if b.Generation == a.Generation || b.WorkerID != "wkr-b" {
		t.Fatalf("second instance's lease = %+v; want a lease of its own beside generation %d", b, a.Generation)
	}
	two := authority.NewDispatcher(f.ops, operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond, MaxWorkers: 2})
	_, err := two.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-x", Tools: fetchTool})
	wantCode(t, err, contract.CodeLeaseHeld)
	_, err = f.d.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "Bad ID"})
	wantCode(t, err, contract.CodeWorkerID)
	f.clock.Add(20 * time.Second)
	if _, err := f.d.RenewLease(ctx, f.conn, contract.LeaseRequest{WorkerID: "wkr-a", Generation: a.Generation}); err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	f.clock.Add(20 * time.Second) // 40 s after acquiring: a renewed holds, b lapsed
	gen := b.Generation
	_, err = f.d.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-b", Generation: &gen})
	wantCode(t, err, contract.CodeLeaseExpired)
	_, err = f.d.RenewLease(ctx, f.conn, contract.LeaseRequest{WorkerID: "wkr-a", Generation: b.Generation})
	wantCode(t, err, contract.CodeLeaseSuperseded) // another instance's generation
	f.clock.Add(11 * time.Second)
	gen = a.Generation
	_, err = f.d.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-a", Generation: &gen})
	wantCode(t, err, contract.CodeLeaseExpired)
	c := f.startup(t, "wkr-c")
	if c.Generation != 3 {
		t.Fatalf("third acquisition = generation %d, want 3", c.Generation)
	}
	_, err = f.d.RenewLease(ctx, f.conn, contract.LeaseRequest{WorkerID: "wkr-a", Generation: a.Generation})
	wantCode(t, err, contract.CodeLeaseSuperseded) // its slot went to wkr-c
	if _, err := f.d.ReleaseLease(ctx, f.conn, contract.LeaseRequest{WorkerID: "wkr-c", Generation: c.Generation}); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	if d := f.startup(t, "wkr-d"); d.Generation != 4 {
		t.Fatalf("acquisition after a release = generation %d, want 4", d.Generation)
	}
}

// TestDispatcher_LostLease: work claimed under a lease that is lost needs a person and is
// never served again; the late report is judged, and a member reconciles.
func TestDispatcher_LostLease(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	a := f.startup(t, "wkr-a")
	id := f.fetch(t, "a.txt")
	rows := f.poll(t, a, fetchTool)
	if err := f.claim(a, rows[0]); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	b := f.startup(t, "wkr-b")
	if e := f.opState(t); e.State != contract.OpNeedsPerson {
		t.Fatalf("operation after its worker lost the lease = %+v, want needs_person", e)
	}
	if got := f.poll(t, b, fetchTool); len(got) != 0 {
		t.Fatalf("lost work re-served: %+v", got)
	}
	late := okReport(a, rows[0], "a.txt")
	for range 2 { // judged once, and a retry is answered the same
		_, err := f.d.Report(ctx, f.conn, late)
		wantCode(t, err, contract.CodeLeaseSuperseded)
	}
	if e := f.opState(t); e.State != contract.OpNeedsPerson {
		t.Fatalf("operation after a late report = %+v, want still needs_person", e)
	}
	_, err := f.d.Reconcile(ctx, f.agent, "default", id, contract.ReconcileRequest{Outcome: "done"})
	wantCode(t, err, contract.CodeForbidden)
	_, err = f.d.Reconcile(ctx, f.admin, "default", id, contract.ReconcileRequest{Outcome: "failed"})
	wantCode(t, err, contract.CodeInvalidArgument)
	e, err := f.d.Reconcile(ctx, f.admin, "default", id, contract.ReconcileRequest{Outcome: "unknown", Reason: "the file server was down"})
	if err != nil || e.State != contract.OpUnknown {
		t.Fatalf("Reconcile = %+v, %v; want unknown", e, err)
	}
	_, err = f.d.Reconcile(ctx, f.admin, "default", id, contract.ReconcileRequest{Outcome: "done"})
	wantCode(t, err, contract.CodeNotNeedsPerson)
}

func TestDispatcher_Claim(t *testing.T) {
	f := newHopFixture(t)
	l := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	row := f.poll(t, l, fetchTool)[0]
	forged := func(mut func(g *contract.Grant)) contract.WorkRow {
		g, err := grant.Decode(row.Grant)
		if err != nil {
			t.Fatal(err)
		}
		mut(&g)
		r := row
		if r.Grant, err = grant.Sign(f.key, g); err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name string
		row  contract.WorkRow
		gen  int64
		code contract.Code
	}{
		{"another request", forged(func(g *contract.Grant) { g.RequestDigest = fetchDigest }), 1, contract.CodeGrantMismatch},
		{"another instance", forged(func(g *contract.Grant) { g.WorkerID = "wkr-z" }), 1, contract.CodeGrantMismatch},
		{"another generation", forged(func(g *contract.Grant) { g.Generation = 7 }), 1, contract.CodeGrantMismatch},
		{"signed with another key", func() contract.WorkRow {
			r := row
			g, _ := grant.Decode(row.Grant)
			r.Grant, _ = grant.Sign([]byte("not the key"), g)
			return r
		}(), 1, contract.CodeGrantSignature},
		{"a generation never granted", row, 9, contract.CodeLeaseExpired},
		{"unknown work", contract.WorkRow{ID: "agt_x.1", Grant: row.Grant}, 1, contract.CodeWorkNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.d.Claim(t.Context(), f.conn, contract.ClaimRequest{ID: tt.row.ID, WorkerID: "wkr-a", Generation: tt.gen, Grant: tt.row.Grant})
			wantCode(t, err, tt.code)
		})
	}
	if e := f.opState(t); e.State != contract.OpRunning || e.Stage != contract.StageNotDispatched {
		t.Fatalf("operation after refused claims = %+v, want still queued", e)
	}
}

func TestDispatcher_ReportOutcomes(t *testing.T) {
	tests := []struct {
		name  string
		mut   func(r *contract.ReportRequest)
		state contract.OperationState
		code  contract.Code
	}{
		{"refused fails", func(r *contract.ReportRequest) {
			r.OK, r.Result, r.Code, r.Reason = false, nil, contract.CodeWorkspaceNotFound, "no such file"
		}, contract.OpFailed, ""},
		{"effect unknown needs a person", func(r *contract.ReportRequest) {
			r.OK, r.Result, r.EffectUnknown, r.Code = false, nil, true, contract.CodeToolTimeout
		}, contract.OpNeedsPerson, ""},
		{"no rows is done with no facts", func(r *contract.ReportRequest) {
			r.Result.Rows = []contract.Args{}
		}, contract.OpDone, ""},
		{"facts are refused", func(r *contract.ReportRequest) {
			r.Facts = []contract.Atom{{Predicate: "fetched"}}
		}, contract.OpRunning, contract.CodeWorkBody},
		{"another grant is refused", func(r *contract.ReportRequest) { r.Grant += "x" }, contract.OpRunning, contract.CodeGrantMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHopFixture(t)
			l := f.startup(t, "wkr-a")
			f.fetch(t, "a.txt")
			row := f.poll(t, l, fetchTool)[0]
			if err := f.claim(l, row); err != nil {
				t.Fatal(err)
			}
			r := okReport(l, row, "a.txt")
			tt.mut(&r)
			_, err := f.d.Report(t.Context(), f.conn, r)
			wantCode(t, err, tt.code)
			if e := f.opState(t); e.State != tt.state {
				t.Errorf("operation = %+v, want %s", e, tt.state)
			}
		})
	}
}

// TestDispatcher_AcrossInstances: two authorities over one store agree on the lease,
// and a claim sent to both lands once.
func TestDispatcher_AcrossInstances(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	d2 := authority.NewDispatcher(authority.NewOperations(other, operation.Config{}), operation.DispatcherConfig{PollWait: time.Millisecond})
	l := f.startup(t, "wkr-a")
	ans, err := d2.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-a", Tools: fetchTool})
	if err != nil || ans.Lease.Generation != l.Generation {
		t.Fatalf("startup poll on the other instance = %+v, %v; want the same lease, generation %d", ans.Lease, err, l.Generation)
	}
	ans, err = d2.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-b", Tools: fetchTool})
	if err != nil || ans.Lease.Generation == l.Generation {
		t.Fatalf("another worker's startup poll on the other instance = %+v, %v; want a lease of its own", ans.Lease, err)
	}
	f.fetch(t, "a.txt")
	row := f.poll(t, l, fetchTool)[0]
	claim := contract.ClaimRequest{ID: row.ID, WorkerID: l.WorkerID, Generation: l.Generation, Grant: row.Grant}
	errs := make(chan error, 2)
	for _, d := range []*operation.Dispatcher{f.d, d2} {
		go func() {
			_, err := d.Claim(ctx, f.conn, claim)
			errs <- err
		}()
	}
	var won, taken int
	for range 2 {
		switch err := <-errs; contract.CodeOf(err) {
		case "":
			won++
		case contract.CodeWorkTaken:
			taken++
		default:
			t.Fatalf("Claim: %v", err)
		}
	}
	if won != 1 || taken != 1 {
		t.Fatalf("claims on two instances: %d accepted, %d taken; want 1 and 1", won, taken)
	}
	rep := okReport(l, row, "a.txt")
	if _, err := d2.Report(ctx, f.conn, rep); err != nil {
		t.Fatalf("Report on the other instance: %v", err)
	}
	if _, err := f.d.Report(ctx, f.conn, rep); err != nil {
		t.Fatalf("receipt retry on the first instance: %v", err)
	}
	if e := f.opState(t); e.State != contract.OpDone {
		t.Fatalf("operation = %+v, want done", e)
	}
}

// withAgents returns the fixture's Agent and new Agents of the given names.
func (f *hopFixture) withAgents(t *testing.T, names ...string) []identity.Caller {
	t.Helper()
	agents := []identity.Caller{f.agent}
	for _, name := range names {
		at, err := f.a.Directory().CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, c)
	}
	return agents
}

// fetchAs queues ag's fetch of a file named after it and returns its work id.
func (f *hopFixture) fetchAs(t *testing.T, ag identity.Caller) string {
	t.Helper()
	ans, err := f.ops.Call(t.Context(), ag, operation.Call{Tool: contract.ToolApplyAction,
		Input:     &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(ag.Name + ".txt")}},
		Delivered: func(int64) bool { return true }})
	if err != nil || state(ans) != contract.OpRunning {
		t.Fatalf("fetch by %s = %+v, %v; want running", ag.Name, ans.Result, err)
	}
	return operation.WorkID(ag.ID, ans.Meta.Ordinal)
}

// servedFetches queues a fetch of the fixture's Agent and of new Agents of the given
// names, and polls them all as worker wkr-a: its lease, the Agents and the rows served.
func (f *hopFixture) servedFetches(t *testing.T, names ...string) (*contract.Lease, []identity.Caller, []contract.WorkRow) {
	t.Helper()
	agents := f.withAgents(t, names...)
	l := f.startup(t, "wkr-a")
	for _, ag := range agents {
		f.fetchAs(t, ag)
	}
	rows := f.poll(t, l, fetchTool)
	if len(rows) != len(agents) {
		t.Fatalf("Poll served %d rows, want %d", len(rows), len(agents))
	}
	return l, agents, rows
}

// TestDispatcher_ServesOldestFirst shows a Poll that serves fewer rows than are queued
// serves the oldest queued work first, whichever Agent queued it: served in any other
// order (by agent id, as once), a busy queue keeps serving the same Agents while the
// others wait.
func TestDispatcher_ServesOldestFirst(t *testing.T) {
	f := newHopFixture(t)
	f.d = authority.NewDispatcher(f.ops, operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond, MaxRows: 2})
	agents := f.withAgents(t, "b", "c", "d", "e")
	// Queue in the reverse order of the Agents' ids, so that the order of the ids and
	// the order of the queue disagree.
	slices.SortFunc(agents, func(x, y identity.Caller) int { return strings.Compare(y.ID, x.ID) })
	l := f.startup(t, "wkr-a")
	var queued []string
	for _, ag := range agents {
		queued = append(queued, f.fetchAs(t, ag))
	}
	for len(queued) > 0 {
		rows := f.poll(t, l, fetchTool)
		var got []string
		for _, r := range rows {
			got = append(got, r.ID)
			if err := f.claim(l, r); err != nil {
				t.Fatalf("Claim %s: %v", r.ID, err)
			}
		}
		want := queued[:min(2, len(queued))]
		if !slices.Equal(got, want) {
			t.Fatalf("Poll served %v, want the oldest queued %v (queue %v)", got, want, queued)
		}
		queued = queued[len(want):]
	}
}

// TestDispatcher_ConcurrentClaims sends every served row's claim twice at once, with one
// row's claims carrying a grant that does not verify: claims that arrive together are
// committed together, and each is still judged alone — every row with a good grant is
// claimed exactly once (one claim accepted, the other work_taken), the tampered row is
// refused both times and stays queued, and one claim event is written per claimed row.
func TestDispatcher_ConcurrentClaims(t *testing.T) {
	f := newHopFixture(t)
	l, _, rows := f.servedFetches(t, "b", "c", "d", "e", "f")
	tampered := rows[0].ID
	// One character of its signature changed to one it is not: the third from the end,
	// whose six bits are all the signature's (the last one's low bits may be padding, so
	// changing it may change nothing, and a fixed replacement may equal what was there).
	i, c := len(rows[0].Grant)-3, byte('A')
	if rows[0].Grant[i] == c {
		c = 'B'
	}
	rows[0].Grant = rows[0].Grant[:i] + string(c) + rows[0].Grant[i+1:]
	type result struct {
		id  string
		err error
	}
	results := make(chan result, 2*len(rows))
	var wg sync.WaitGroup
	for range 2 {
		for _, r := range rows {
			wg.Go(func() { results <- result{r.ID, f.claim(l, r)} })
		}
	}
	wg.Wait()
	close(results)
	accepted := map[string]int{}
	for r := range results {
		switch code := contract.CodeOf(r.err); {
		case r.err == nil:
			accepted[r.id]++
		case r.id == tampered:
			if code != contract.CodeGrantSignature {
				t.Errorf("claim of the tampered row = %v, want %s", r.err, contract.CodeGrantSignature)
			}
		case code != contract.CodeWorkTaken:
			t.Errorf("second claim of %s = %v, want %s", r.id, r.err, contract.CodeWorkTaken)
		}
	}
	for _, r := range rows {
		want := 1
		if r.ID == tampered {
			want = 0
		}
		if accepted[r.ID] != want {
			t.Errorf("claims of %s accepted %d times, want %d", r.ID, accepted[r.ID], want)
		}
	}
	if claimed := eventTypes(t, f.st, event.WorkClaimed)[event.WorkClaimed]; claimed != len(rows)-1 {
		t.Errorf("%d claim events, want %d", claimed, len(rows)-1)
	}
	if got := f.poll(t, l, fetchTool); len(got) != 1 || got[0].ID != tampered {
		t.Errorf("after the claims Poll served %+v, want only the tampered row %s again", got, tampered)
	}
}

// TestDispatcher_ConcurrentReports sends every claimed row's report twice at once, the
// same bytes (a receipt retry racing the first), and for one row a third report with
// other content: reports that arrive together are committed together, and each is
// still judged alone — every Operation is done, its outcome applied once (one report
// event, one action.completed), the retries are answered as the first was, and the other
// content is refused with report_conflict.
func TestDispatcher_ConcurrentReports(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	l, agents, rows := f.servedFetches(t, "b", "c", "d", "e", "f")
	for _, r := range rows {
		if err := f.claim(l, r); err != nil {
			t.Fatalf("Claim %s: %v", r.ID, err)
		}
	}
	type result struct {
		id    string
		other bool
		err   error
	}
	results := make(chan result, 2*len(rows)+1)
	var wg sync.WaitGroup
	for range 2 {
		for _, r := range rows {
			wg.Go(func() {
				_, err := f.d.Report(ctx, f.conn, okReport(l, r, r.ID+".txt"))
				results <- result{id: r.ID, err: err}
			})
		}
	}
	wg.Go(func() {
		_, err := f.d.Report(ctx, f.conn, okReport(l, rows[0], "other.txt"))
		results <- result{id: rows[0].ID, other: true, err: err}
	})
	wg.Wait()
	close(results)
	// Whichever content of rows[0] landed first is its report; the reports with the
	// other content, and only those, are refused.
	refused := map[bool]int{} // by whether the report had the other content
	for r := range results {
		switch code := contract.CodeOf(r.err); {
		case code == contract.CodeReportConflict && r.id == rows[0].ID:
			refused[r.other]++
		case r.err != nil:
			t.Errorf("report of %s (other content %v) = %v, want accepted", r.id, r.other, r.err)
		}
	}
	if refused[true]+refused[false] == 0 || refused[true] > 0 && refused[false] > 0 || refused[false] != 0 && refused[false] != 2 {
		t.Errorf("refused with report_conflict: %d of the other content, %d of the first; want the one or the two of one content", refused[true], refused[false])
	}
	count := eventTypes(t, f.st, event.WorkReported, event.ActionCompleted)
	if count[event.WorkReported] != len(rows) || count[event.ActionCompleted] != len(rows) {
		t.Errorf("%d report events and %d action.completed, want %d of each", count[event.WorkReported], count[event.ActionCompleted], len(rows))
	}
	for _, ag := range agents {
		st, err := f.ops.Operations().State(ctx, ag)
		if err != nil {
			t.Fatal(err)
		}
		if e := st.State[0]; e.State != contract.OpDone {
			t.Errorf("%s's fetch = %+v, want done", ag.Name, e.OperationEntry)
		}
	}
}

// TestDispatcher_ClaimsAndReportsTogether sends, at once, two claims of each of three
// served rows and a report of each of two claimed rows, while another claim's
// transaction is paused before its commit, so that they queue behind it and commit
// together, claims and reports in one transaction (how they batch is the hop's
// business; what is checked holds however they do): each is judged alone — every row
// is claimed exactly once (its second claim work_taken), every report is accepted and
// its outcome applied once, and the Operations stand where their calls left them.
func TestDispatcher_ClaimsAndReportsTogether(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	ctx := t.Context()
	l, agents, rows := f.servedFetches(t, "b", "c", "d", "e", "f", "g")
	ran, served := rows[:2], rows[2:]
	for _, r := range ran {
		if err := f.claim(l, r); err != nil {
			t.Fatalf("Claim %s: %v", r.ID, err)
		}
	}
	release, paused := startPaused(t, ps, func() error { return f.claim(l, served[0]) })
	type result struct {
		id     string
		report bool
		err    error
	}
	results := make(chan result, 2*len(served)+len(ran))
	var wg sync.WaitGroup
	for _, r := range served[1:] {
		for range 2 {
			wg.Go(func() { results <- result{id: r.ID, err: f.claim(l, r)} })
		}
	}
	for _, r := range ran {
		wg.Go(func() {
			_, err := f.d.Report(ctx, f.conn, okReport(l, r, r.ID+".txt"))
			results <- result{id: r.ID, report: true, err: err}
		})
	}
	// Time for the calls to queue behind the paused one: how they batch changes no
	// outcome checked below.
	time.Sleep(50 * time.Millisecond)
	release()
	if err := <-paused; err != nil {
		t.Fatalf("the paused Claim of %s: %v", served[0].ID, err)
	}
	wg.Wait()
	close(results)
	claims := map[string]int{}
	for r := range results {
		switch {
		case r.report && r.err != nil:
			t.Errorf("report of %s = %v, want accepted", r.id, r.err)
		case r.report:
		case r.err == nil:
			claims[r.id]++
		case contract.CodeOf(r.err) != contract.CodeWorkTaken:
			t.Errorf("claim of %s = %v, want accepted or %s", r.id, r.err, contract.CodeWorkTaken)
		}
	}
	for _, r := range served[1:] {
		if claims[r.ID] != 1 {
			t.Errorf("claims of %s accepted %d times, want 1", r.ID, claims[r.ID])
		}
	}
	count := eventTypes(t, f.st, event.WorkClaimed, event.WorkReported, event.ActionCompleted)
	if count[event.WorkClaimed] != len(rows) || count[event.WorkReported] != len(ran) || count[event.ActionCompleted] != len(ran) {
		t.Errorf("%d claim events, %d report events and %d action.completed; want %d, %d and %d",
			count[event.WorkClaimed], count[event.WorkReported], count[event.ActionCompleted], len(rows), len(ran), len(ran))
	}
	states := map[contract.OperationState]int{}
	for _, ag := range agents {
		st, err := f.ops.Operations().State(ctx, ag)
		if err != nil {
			t.Fatal(err)
		}
		e := st.State[0]
		if e.State == contract.OpRunning && e.Stage != contract.StageAtWorker {
			t.Errorf("%s's fetch = %+v, want done or running at the worker", ag.Name, e.OperationEntry)
		}
		states[e.State]++
	}
	if states[contract.OpDone] != len(ran) || states[contract.OpRunning] != len(served) {
		t.Errorf("fetches by state %v, want %d done and %d running", states, len(ran), len(served))
	}
}

// TestOperations_AdmissionsTogether sends, at once, one write of each of four Agents and
// a second write of one of them, while another Agent's admission is paused before its
// commit, so that they queue behind it and are admitted together: each passes the gate
// on its own, as it would alone — every Agent's first write is admitted as its first
// Operation, and of the two writes of one Agent one is admitted and the other refused
// operation_running, since an Agent's second call passes the gate after its first.
func TestOperations_AdmissionsTogether(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	agents := f.withAgents(t, "b", "c", "d", "e")
	write := func(ag identity.Caller) (operation.Answer, error) {
		return f.ops.Call(t.Context(), ag, operation.Call{Tool: contract.ToolApplyAction,
			Input:     &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(ag.Name + ".txt")}},
			Delivered: func(int64) bool { return true }})
	}
	type result struct {
		agent string
		ans   operation.Answer
		err   error
	}
	results := make(chan result, len(agents)+1)
	release, paused := startPaused(t, ps, func() error {
		ans, err := write(agents[0])
		results <- result{agents[0].ID, ans, err}
		return err
	})
	var wg sync.WaitGroup
	for _, ag := range append(agents[1:], agents[1]) {
		wg.Go(func() {
			ans, err := write(ag)
			results <- result{ag.ID, ans, err}
		})
	}
	// Time for the writes to queue behind the paused one: how they batch changes no
	// outcome checked below, only whether the batch's own checks are what holds them.
	time.Sleep(50 * time.Millisecond)
	release()
	if err := <-paused; err != nil {
		t.Fatalf("the paused write: %v", err)
	}
	wg.Wait()
	close(results)
	admitted, refused := map[string]int{}, map[string]int{}
	for r := range results {
		switch {
		case r.err != nil:
			t.Errorf("write of %s: %v", r.agent, r.err)
		case state(r.ans) == contract.OpRunning && r.ans.Meta.Ordinal == 1:
			admitted[r.agent]++
		case r.ans.Result.ErrorCode == contract.CodeOperationRunning:
			refused[r.agent]++
		default:
			t.Errorf("write of %s = %+v (ordinal %d), want running as Operation 1 or refused %s", r.agent, r.ans.Result, r.ans.Meta.Ordinal, contract.CodeOperationRunning)
		}
	}
	for _, ag := range agents {
		want := 0
		if ag.ID == agents[1].ID {
			want = 1
		}
		if admitted[ag.ID] != 1 || refused[ag.ID] != want {
			t.Errorf("%s's writes: %d admitted, %d refused operation_running; want 1 and %d", ag.Name, admitted[ag.ID], refused[ag.ID], want)
		}
	}
	if n := eventTypes(t, f.st, event.OpAdmitted)[event.OpAdmitted]; n != len(agents) {
		t.Errorf("%d operation.admitted events, want %d", n, len(agents))
	}
}

// TestOperations_AskAdmittedAlone: a docket.ask whose own transaction refuses it (its
// asking task gone since the call learnt its origin: postAsked) fails no other call: it
// queues behind another Agent's write, both behind a paused admission, and is admitted
// in a batch of its own, so the other write is admitted as it would be alone and the ask
// alone is refused ask_refused. In one batch, the ask's refusal failed the whole
// transaction, and the other write with it.
func TestOperations_AskAdmittedAlone(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	agents := f.withAgents(t, "b", "writer")
	if _, err := f.a.PublishPolicy(t.Context(), f.admin, "default", contract.PublishPolicyRequest{File: "delegation.toml", Text: askPolicy}); err != nil {
		t.Fatal(err)
	}
	fetch := func(ag identity.Caller) (operation.Answer, error) {
		return f.ops.Call(t.Context(), ag, operation.Call{Tool: contract.ToolApplyAction,
			Input:     &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(ag.Name + ".txt")}},
			Delivered: func(int64) bool { return true }})
	}
	release, paused := startPaused(t, ps, func() error {
		_, err := fetch(agents[2])
		return err
	})
	type result struct {
		ans operation.Answer
		err error
	}
	other, ask := make(chan result, 1), make(chan result, 1)
	go func() {
		ans, err := fetch(agents[1])
		other <- result{ans, err}
	}()
	// The other write queues first: an ask first in its batch is alone in it anyway.
	time.Sleep(30 * time.Millisecond)
	go func() {
		// An origin named as the call's (no conversation to learn it from), of a task
		// the log does not hold: the gate passes it, its transaction refuses it.
		in := &contract.ApplyActionInput{Action: contract.ActionAsk, Params: contract.Args{"agent": contract.StringValue("writer"), "task": contract.StringValue("Draft.")}}
		ans, err := f.ops.Call(t.Context(), f.agent, operation.Call{Tool: contract.ToolApplyAction, Input: in,
			Ask: contract.AskOrigin{Task: "t-gone"}, Delivered: func(int64) bool { return true }})
		ask <- result{ans, err}
	}()
	time.Sleep(50 * time.Millisecond)
	release()
	if err := <-paused; err != nil {
		t.Fatalf("the paused write: %v", err)
	}
	if r := <-other; r.err != nil || state(r.ans) != contract.OpRunning || r.ans.Meta.Ordinal != 1 {
		t.Errorf("b's write beside the refused ask = %v %+v, want running as Operation 1", r.err, r.ans.Result)
	}
	r := <-ask
	code := r.ans.Result.ErrorCode
	if ce, ok := errors.AsType[*contract.Error](r.err); ok {
		code = ce.Code
	} else if r.err != nil {
		t.Fatalf("the ask: %v", r.err)
	}
	if code != contract.CodeAskRefused {
		t.Errorf("the ask of a task gone = %s %+v, want %s", code, r.ans.Result, contract.CodeAskRefused)
	}
}
