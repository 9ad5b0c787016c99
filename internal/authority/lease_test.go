package authority_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// newOpsFixtureOn is newOpsFixture on st, with a hold bound of a millisecond.
func newOpsFixtureOn(t *testing.T, st store.Store) *opsFixture {
	t.Helper()
	return opsFixtureOver(t, st, time.Millisecond)
}

// opEntry returns the agent's Operation ordinal from its strip.
func (f *hopFixture) opEntry(t *testing.T, ordinal int64) contract.OperationEntry {
	t.Helper()
	st, err := f.ops.Operations().State(t.Context(), f.agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.State {
		if s.Ordinal == ordinal {
			return s.OperationEntry
		}
	}
	t.Fatalf("Operation %d is not on the agent's strip %+v", ordinal, st.State)
	return contract.OperationEntry{}
}

// TestDispatcher_TakeoverRacesClaim races, on two instances over one database, a claim
// under generation N on instance A against a takeover as N+1 on instance B, whose clock
// runs ahead so that it finds A's lease expired while A still finds it live (the window
// where both used to commit and B's sweep missed A's claim). The lease row serializes
// them: either the claim is refused as superseded and the work stays queued, or the
// claim lands first and the takeover makes its Operation need a person. No Operation is
// ever left at a worker without a live lease.
func TestDispatcher_TakeoverRacesClaim(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newHopFixtureOn(t, newOpsFixtureOn(t, s1))
			ctx := t.Context()
			ahead := func() time.Time { return f.clock.Now().Add(time.Minute) }
			ab := authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: ahead})
			dB := authority.NewDispatcher(authority.NewOperations(ab, operation.Config{}),
				operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond})
			const rounds = 12
			var claimsWon, claimsRefused int
			var delivered []int64 // every earlier round's Operation: its result reached the agent
			for i := range rounds {
				a := f.startup(t, "wkr-a")
				ans := f.call(t, f.ops, &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(fmt.Sprintf("r%d.txt", i))}}, delivered...)
				if state(ans) != contract.OpRunning {
					t.Fatalf("round %d: fetch = %s %+v, want running", i, ans.Result.ErrorCode, ans.Result.Operations)
				}
				ordinal := ans.Meta.Ordinal
				delivered = append(delivered, ordinal)
				rows := f.poll(t, a, fetchTool)
				if len(rows) != 1 {
					t.Fatalf("round %d: served %d rows, want 1", i, len(rows))
				}
				claimed, tookOver := make(chan error, 1), make(chan *contract.Lease, 1)
				go func() { claimed <- f.claim(a, rows[0]) }()
				go func() {
					ans, err := dB.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-b", Tools: fetchTool})
					if err != nil {
						t.Errorf("round %d: takeover on instance B: %v", i, err)
					}
					tookOver <- ans.Lease
				}()
				claimErr, b := <-claimed, <-tookOver
				if b == nil {
					t.FailNow()
				}
				if b.Generation != a.Generation+1 {
					t.Fatalf("round %d: takeover = generation %d, want %d", i, b.Generation, a.Generation+1)
				}
				e := f.opEntry(t, ordinal)
				switch contract.CodeOf(claimErr) {
				case "":
					claimsWon++
					if e.State != contract.OpNeedsPerson {
						t.Fatalf("round %d: the claim won and the takeover followed, but the Operation is %s/%s, want needs_person", i, e.State, e.Stage)
					}
					// A person settles it, so the agent may call again next round.
					if _, err := f.d.Reconcile(ctx, f.admin, "default", rows[0].ID, contract.ReconcileRequest{Outcome: "done"}); err != nil {
						t.Fatalf("round %d: reconcile: %v", i, err)
					}
				case contract.CodeLeaseSuperseded:
					claimsRefused++
					if e.State != contract.OpRunning || e.Stage != contract.StageNotDispatched {
						t.Fatalf("round %d: the claim was refused, but the Operation is %s/%s, want still queued", i, e.State, e.Stage)
					}
				default:
					t.Fatalf("round %d: claim under the old generation: %v", i, claimErr)
				}
				if _, err := dB.ReleaseLease(ctx, f.conn, contract.LeaseRequest{WorkerID: b.WorkerID, Generation: b.Generation}); err != nil {
					t.Fatalf("round %d: release on instance B: %v", i, err)
				}
				if claimErr != nil { // the queued work is left to the next round's worker: settle it
					l := f.startup(t, "wkr-c")
					rows := f.poll(t, l, fetchTool)
					if len(rows) != 1 {
						t.Fatalf("round %d: refused work served %d times, want once", i, len(rows))
					}
					if err := f.claim(l, rows[0]); err != nil {
						t.Fatalf("round %d: claim of the refused work: %v", i, err)
					}
					if _, err := f.d.Report(ctx, f.conn, okReport(l, rows[0], fmt.Sprintf("r%d.txt", i))); err != nil {
						t.Fatalf("round %d: report: %v", i, err)
					}
					if _, err := f.d.ReleaseLease(ctx, f.conn, contract.LeaseRequest{WorkerID: l.WorkerID, Generation: l.Generation}); err != nil {
						t.Fatalf("round %d: release: %v", i, err)
					}
				}
			}
			t.Logf("%d claims landed before the takeover, %d were refused after it", claimsWon, claimsRefused)
		})
	}
}

// TestDispatcher_RenewalAppendsNothing: a renewal moves only the lease row, so it wakes
// no held Poll, yet extends the lease on every instance.
func TestDispatcher_RenewalAppendsNothing(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	l := f.startup(t, "wkr-a")
	before, err := f.st.Head(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	var last *contract.Lease
	for range 3 {
		f.clock.Add(20 * time.Second)
		ans, err := f.d.RenewLease(ctx, f.conn, contract.LeaseRequest{WorkerID: "wkr-a", Generation: l.Generation})
		if err != nil {
			t.Fatalf("RenewLease: %v", err)
		}
		last = ans.Lease
	}
	if want := f.clock.Now().Add(30 * time.Second); !last.ExpiresAt.Equal(want) {
		t.Errorf("renewed lease expires %s, want %s", last.ExpiresAt, want)
	}
	if again := f.startup(t, "wkr-a"); again.Generation != l.Generation { // the startup Poll sent again renews too
		t.Fatalf("repeated startup Poll = generation %d, want %d", again.Generation, l.Generation)
	}
	after, err := f.st.Head(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("renewals moved the log from seq %d to %d; want no event", before.Seq, after.Seq)
	}
	row, err := f.st.Lease(ctx, string(f.conn.ID))
	if err != nil || row.Generation != l.Generation || !row.ExpiresAt.Equal(f.clock.Now().Add(30*time.Second)) {
		t.Errorf("lease row = %+v, %v; want generation %d until %s", row, err, l.Generation, f.clock.Now().Add(30*time.Second))
	}
	f.clock.Add(25 * time.Second) // 85 s after acquiring: held only thanks to the renewals
	gen := l.Generation
	if _, err := f.d.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-a", Generation: &gen, Tools: fetchTool}); err != nil {
		t.Errorf("poll 85 s after acquiring, renewed: %v; want the lease still held", err)
	}
}

// TestDispatcher_SweepExpired: work claimed by a worker that dies and never comes back
// needs a person once its lease expires, with no takeover; sweeping again appends
// nothing, a renewal keeps the work at its worker, and a late report is not applied.
func TestDispatcher_SweepExpired(t *testing.T) {
	for _, tc := range []struct {
		name    string
		advance []time.Duration // clock steps, with a renewal after each but the last
		want    contract.OperationState
		settled int // what SweepExpired answers
	}{
		{name: "expired", advance: []time.Duration{31 * time.Second}, want: contract.OpNeedsPerson, settled: 1},
		{name: "at expiry", advance: []time.Duration{30 * time.Second}, want: contract.OpNeedsPerson, settled: 1},
		{name: "still live", advance: []time.Duration{29 * time.Second}, want: contract.OpRunning},
		{name: "renewed", advance: []time.Duration{20 * time.Second, 20 * time.Second}, want: contract.OpRunning},
		{name: "renewed then lost", advance: []time.Duration{20 * time.Second, 31 * time.Second}, want: contract.OpNeedsPerson, settled: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newHopFixture(t)
			ctx := t.Context()
			a := f.startup(t, "wkr-a")
			f.fetch(t, "a.txt")
			rows := f.poll(t, a, fetchTool)
			if err := f.claim(a, rows[0]); err != nil {
				t.Fatal(err)
			}
			for i, step := range tc.advance {
				f.clock.Add(step)
				if i < len(tc.advance)-1 {
					if _, err := f.d.RenewLease(ctx, f.conn, contract.LeaseRequest{WorkerID: "wkr-a", Generation: a.Generation}); err != nil {
						t.Fatalf("RenewLease: %v", err)
					}
				}
			}
			n, err := f.d.SweepExpired(ctx)
			if err != nil {
				t.Fatalf("SweepExpired: %v", err)
			}
			e := f.opState(t)
			if e.State != tc.want || n != tc.settled {
				t.Fatalf("after the sweep: %d settled, operation %+v; want %d settled, %s", n, e, tc.settled, tc.want)
			}
			if tc.want != contract.OpNeedsPerson {
				return
			}
			if !strings.Contains(e.Reason, "wkr-a lost its lease") || e.Stage == contract.StageAtWorker {
				t.Errorf("needs_person entry = %+v; want the lost worker named and no longer at the worker", e)
			}
			before, err := f.st.Head(ctx, "default")
			if err != nil {
				t.Fatal(err)
			}
			f.clock.Add(time.Minute)
			if n, err := f.d.SweepExpired(ctx); err != nil || n != 0 {
				t.Fatalf("second SweepExpired = %d, %v; want 0, nil", n, err)
			}
			if after, err := f.st.Head(ctx, "default"); err != nil || after != before {
				t.Fatalf("second sweep moved the log from %+v to %+v (%v); want no event", before, after, err)
			}
			_, err = f.d.Report(ctx, f.conn, okReport(a, rows[0], "a.txt"))
			wantCode(t, err, contract.CodeLeaseExpired)
			if e := f.opState(t); e.State != contract.OpNeedsPerson {
				t.Fatalf("operation after a late report = %+v, want still needs_person", e)
			}
			b := f.startup(t, "wkr-b") // a takeover after the sweep settles nothing twice
			if got := f.poll(t, b, fetchTool); len(got) != 0 {
				t.Fatalf("lost work re-served: %+v", got)
			}
			if e := f.opState(t); e.State != contract.OpNeedsPerson {
				t.Fatalf("operation after a takeover = %+v, want still needs_person", e)
			}
		})
	}
}

// TestDispatcher_SweepExpiredAcrossInstances: two instances over one database sweep the
// same expired lease at once; the lease row lock lets one settle the work and the other
// find nothing, so the Operation changes once.
func TestDispatcher_SweepExpiredAcrossInstances(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newHopFixtureOn(t, newOpsFixtureOn(t, s1))
			ctx := t.Context()
			ab := authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now})
			dB := authority.NewDispatcher(authority.NewOperations(ab, operation.Config{}),
				operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond})
			a := f.startup(t, "wkr-a")
			f.fetch(t, "a.txt")
			rows := f.poll(t, a, fetchTool)
			if err := f.claim(a, rows[0]); err != nil {
				t.Fatal(err)
			}
			f.clock.Add(time.Minute)
			before, err := s1.Head(ctx, "default")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var settled [2]int
			var errs [2]error
			for i, d := range []*operation.Dispatcher{f.d, dB} {
				wg.Go(func() { settled[i], errs[i] = d.SweepExpired(ctx) })
			}
			wg.Wait()
			if errs[0] != nil || errs[1] != nil || settled[0]+settled[1] != 1 {
				t.Fatalf("sweeps = %v, %v; want one Operation settled, no error", settled, errs)
			}
			after, err := s1.Head(ctx, "default")
			if err != nil {
				t.Fatal(err)
			}
			if after.Seq != before.Seq+1 {
				t.Errorf("sweeps moved the log from seq %d to %d; want one event", before.Seq, after.Seq)
			}
			if e := f.opState(t); e.State != contract.OpNeedsPerson {
				t.Fatalf("operation = %+v, want needs_person", e)
			}
		})
	}
}

// TestDispatcher_Run: the sweep loop settles work stranded under an expired lease on its
// own, and returns nil once its context ends.
func TestDispatcher_Run(t *testing.T) {
	f := newHopFixture(t)
	a := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	rows := f.poll(t, a, fetchTool)
	if err := f.claim(a, rows[0]); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(31 * time.Second)
	// A short lease TTL makes the loop tick every 10ms of real time.
	d := authority.NewDispatcher(f.ops, operation.DispatcherConfig{LeaseTTL: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for f.opState(t).State != contract.OpNeedsPerson {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("operation %+v never needed a person under Run", f.opState(t))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil once its context ends", err)
	}
}

// TestOperations_HoldEndsOnAnotherInstance: a call held on instance A ends when its
// Operation is settled on instance B — a worker served, claimed and reported through B —
// with nothing else happening on A. The driver's follow goroutine on A reads no head of
// its own: it catches up to the head its wait on the store returned (docs/architecture.md,
// catch-ups from memory), so a commit of another instance is what wakes it and what it
// reaches.
func TestOperations_HoldEndsOnAnotherInstance(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newHopFixtureOn(t, opsFixtureOver(t, s1, time.Minute))
			ctx := t.Context()
			ab := authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now})
			dB := authority.NewDispatcher(authority.NewOperations(ab, operation.Config{}),
				operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond})
			h, _, err := f.ops.Begin(ctx, f.agent, operation.Call{Tool: contract.ToolApplyAction,
				Input: &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a.txt")}}})
			if err != nil || h == nil {
				t.Fatalf("Begin = %v (held %v), want a held write", err, h != nil)
			}
			done := make(chan error, 1)
			go func() { done <- h.Wait(ctx) }()
			start, err := dB.Poll(ctx, f.conn, contract.PollRequest{WorkerID: "wkr-b", Tools: fetchTool})
			if err != nil {
				t.Fatal(err)
			}
			l := start.Lease
			rows := start.Work
			if len(rows) == 0 {
				gen := l.Generation
				ans, err := dB.Poll(ctx, f.conn, contract.PollRequest{WorkerID: l.WorkerID, Generation: &gen, Tools: fetchTool})
				if err != nil {
					t.Fatal(err)
				}
				rows = ans.Work
			}
			if len(rows) != 1 {
				t.Fatalf("B served %d rows, want the held call's", len(rows))
			}
			if _, err := dB.Claim(ctx, f.conn, contract.ClaimRequest{ID: rows[0].ID, WorkerID: l.WorkerID, Generation: l.Generation, Grant: rows[0].Grant}); err != nil {
				t.Fatalf("claim on B: %v", err)
			}
			if _, err := dB.Report(ctx, f.conn, okReport(l, rows[0], "a.txt")); err != nil {
				t.Fatalf("report on B: %v", err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Wait: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the call held on A did not end within 15 s of its report on B")
			}
			ans, err := h.Answer(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if state(ans) != contract.OpDone {
				t.Errorf("A's answer = %+v, want the Operation done", ans.Result.Operations)
			}
		})
	}
}
