package authority_test

import (
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// TestDispatcher_SeveralWorkers: two worker instances of one Connection each hold a lease
// of their own and are served different rows. When one dies, the work it claimed needs a
// person (never run twice), the row it was served and never claimed is served to the
// other, and the other's claimed work stays with it — also when a third instance takes
// the dead one's slot. See docs/workers.md (Several workers per Connection).
func TestDispatcher_SeveralWorkers(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	f.d = authority.NewDispatcher(f.ops, operation.DispatcherConfig{LeaseTTL: 30 * time.Second, PollWait: time.Millisecond, MaxRows: 2})
	agents := f.withAgents(t, "b", "c", "d")
	byWork := map[string]identity.Caller{}
	for _, ag := range agents {
		byWork[f.fetchAs(t, ag)] = ag
	}
	a := f.startup(t, "wkr-a")
	b := f.startup(t, "wkr-b")
	rowsA := f.poll(t, a, fetchTool)
	rowsB := f.poll(t, b, fetchTool)
	if len(rowsA) != 2 || len(rowsB) != 2 {
		t.Fatalf("served %d rows to wkr-a and %d to wkr-b, want 2 each", len(rowsA), len(rowsB))
	}
	for _, r := range rowsB {
		if slices.ContainsFunc(rowsA, func(o contract.WorkRow) bool { return o.ID == r.ID }) {
			t.Fatalf("row %s was served to both workers of the Connection; want each its own rows", r.ID)
		}
	}
	// wkr-a claims one of its rows and dies; wkr-b claims both of its and reports one.
	if err := f.claim(a, rowsA[0]); err != nil {
		t.Fatalf("wkr-a Claim: %v", err)
	}
	for _, r := range rowsB {
		if err := f.claim(b, r); err != nil {
			t.Fatalf("wkr-b Claim %s: %v", r.ID, err)
		}
	}
	if _, err := f.d.Report(ctx, f.conn, okReport(b, rowsB[0], "b0.txt")); err != nil {
		t.Fatalf("wkr-b Report: %v", err)
	}
	f.clock.Add(20 * time.Second)
	if _, err := f.d.RenewLease(ctx, f.conn, contract.LeaseRequest{WorkerID: "wkr-b", Generation: b.Generation}); err != nil {
		t.Fatalf("wkr-b RenewLease: %v", err)
	}
	f.clock.Add(11 * time.Second) // wkr-a's lease lapsed; wkr-b's holds
	n, err := f.d.SweepExpired(ctx)
	if err != nil || n != 1 {
		t.Fatalf("SweepExpired = %d, %v; want wkr-a's one claimed Operation settled", n, err)
	}
	entry := func(id string) contract.OperationEntry {
		t.Helper()
		st, err := f.ops.Operations().State(ctx, byWork[id])
		if err != nil {
			t.Fatal(err)
		}
		return st.State[0].OperationEntry
	}
	if e := entry(rowsA[0].ID); e.State != contract.OpNeedsPerson || e.ReasonCode != contract.CodeWorkerLost {
		t.Errorf("the dead worker's claimed Operation = %+v; want needs_person, worker_lost", e)
	}
	if e := entry(rowsB[1].ID); e.State != contract.OpRunning || e.Stage != contract.StageAtWorker {
		t.Errorf("the live worker's claimed Operation = %+v; want still running at_worker", e)
	}
	wantCode(t, f.claim(a, rowsA[1]), contract.CodeLeaseExpired)
	again := f.poll(t, b, fetchTool)
	if len(again) != 1 || again[0].ID != rowsA[1].ID {
		t.Fatalf("wkr-b was served %+v after wkr-a died; want %s, the row wkr-a never claimed", again, rowsA[1].ID)
	}
	if err := f.claim(b, again[0]); err != nil {
		t.Fatalf("wkr-b Claim %s: %v", again[0].ID, err)
	}
	// A third instance takes the dead one's slot: the live worker's work stays with it.
	c := f.startup(t, "wkr-c")
	if c.Generation != 3 {
		t.Fatalf("wkr-c's lease = generation %d, want 3", c.Generation)
	}
	if e := entry(rowsB[1].ID); e.State != contract.OpRunning || e.Stage != contract.StageAtWorker {
		t.Errorf("after wkr-c took a lease, the live worker's claimed Operation = %+v; want still running at_worker", e)
	}
	// The row served to the dead worker and never claimed is served to a live one.
	for _, r := range []contract.WorkRow{rowsB[1], again[0]} {
		if _, err := f.d.Report(ctx, f.conn, okReport(b, r, "x.txt")); err != nil {
			t.Fatalf("wkr-b Report %s: %v", r.ID, err)
		}
	}
	for _, id := range []string{rowsB[0].ID, rowsB[1].ID, rowsA[1].ID} {
		if e := entry(id); e.State != contract.OpDone {
			t.Errorf("Operation %s = %+v; want done", id, e)
		}
	}
}
