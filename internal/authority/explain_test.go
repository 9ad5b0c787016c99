package authority_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// bindFile binds a file Source named name, attesting fetched, on Connection conn.
func (f *hopFixture) bindFile(t *testing.T, conn, name string) {
	t.Helper()
	if _, err := f.a.Directory().BindSource(t.Context(), f.admin, "default", conn, contract.Source{Name: name, Type: "file",
		Words: []string{"fetched"}, Tier: contract.TierAttested}); err != nil {
		t.Fatal(err)
	}
}

// desk creates Connection desk with test.fetch@1 locked and a file Source for each name,
// then revokes laptop, so that only desk can serve the fetch.
func (f *hopFixture) desk(t *testing.T, sources ...string) {
	t.Helper()
	ctx := t.Context()
	if _, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "desk"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.LockTool(ctx, f.admin, "default", "desk", contract.ToolLock{Tool: "test.fetch@1", Digest: fetchDigest}); err != nil {
		t.Fatal(err)
	}
	for _, s := range sources {
		f.bindFile(t, "desk", s)
	}
	if _, err := f.a.Directory().RevokeConnection(ctx, f.admin, "default", "laptop"); err != nil {
		t.Fatal(err)
	}
}

// TestDispatcher_ChoosesDeclaredSource: a Connection with two file Sources serves the
// fetch against the one its capability declares (workspace). It used to serve nothing:
// the dispatcher wanted exactly one Source of the type.
func TestDispatcher_ChoosesDeclaredSource(t *testing.T) {
	f := newHopFixture(t)
	f.bindFile(t, "laptop", "archive")
	l := f.startup(t, "wkr-a")
	id := f.fetch(t, "a.txt")
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("Poll served %+v, want work %s", rows, id)
	}
	if got := mustTarget(t, rows[0]).Source; got != "workspace" {
		t.Errorf("served against Source %q, want workspace, the one the capability declares", got)
	}
}

// TestDispatcher_Explain: queued work that no live Connection can serve says why on its
// Operation, in a reasonCode and a reason, and in the project's waiting list; work that
// can be served says nothing.
func TestDispatcher_Explain(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, f *hopFixture)
		code   contract.Code
		naming string // a word the reason holds
	}{
		{"served", func(t *testing.T, f *hopFixture) { f.startup(t, "wkr-a") }, "", ""},
		{"no live worker", func(*testing.T, *hopFixture) {}, contract.CodeNoLiveWorker, "laptop"},
		{"worker does not offer the tool", func(t *testing.T, f *hopFixture) {
			if _, err := f.d.Poll(t.Context(), f.conn, contract.PollRequest{WorkerID: "wkr-a"}); err != nil {
				t.Fatal(err)
			}
		}, contract.CodeToolNotAdvertised, "manifest"},
		{"worker offers another digest", func(t *testing.T, f *hopFixture) {
			other := []contract.ToolDescriptor{fetchTool[0]}
			other[0].Digest = "sha256:" + strings.Repeat("f", 64)
			if _, err := f.d.Poll(t.Context(), f.conn, contract.PollRequest{WorkerID: "wkr-a", Tools: other}); err != nil {
				t.Fatal(err)
			}
		}, contract.CodeToolNotAdvertised, "locked at"},
		{"Connection revoked", func(t *testing.T, f *hopFixture) {
			if _, err := f.a.Directory().RevokeConnection(t.Context(), f.admin, "default", "laptop"); err != nil {
				t.Fatal(err)
			}
		}, contract.CodeNoToolLocked, "test.fetch@1"},
		{"no Source bound", func(t *testing.T, f *hopFixture) { f.desk(t) }, contract.CodeNoSourceBound, "desk"},
		{"two Sources, neither the declared one", func(t *testing.T, f *hopFixture) { f.desk(t, "inbox", "archive") }, contract.CodeSourceAmbiguous, "(archive, inbox)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHopFixture(t)
			ctx := t.Context()
			id := f.fetch(t, "a.txt")
			tt.setup(t, f)
			if _, err := f.d.Explain(ctx, "default"); err != nil {
				t.Fatalf("Explain: %v", err)
			}
			e := f.opEntry(t, 1)
			if e.State != contract.OpRunning || e.Stage != contract.StageNotDispatched || e.ReasonCode != tt.code || !strings.Contains(e.Reason, tt.naming) {
				t.Fatalf("Operation = %+v, want running not_dispatched with reasonCode %q and a reason naming %q", e, tt.code, tt.naming)
			}
			infos, err := f.ops.OperationList(ctx, f.admin, "default", "", true)
			if err != nil {
				t.Fatal(err)
			}
			if len(infos) != 1 || infos[0].Work != id || infos[0].Waiting != contract.WaitDispatch {
				t.Fatalf("OperationList(waiting) = %+v, want work %s waiting for dispatch", infos, id)
			}
			if diff := cmp.Diff(e, infos[0].OperationEntry); diff != "" {
				t.Errorf("listed entry (-want +got):\n%s", diff)
			}
			if n, err := f.d.Explain(ctx, "default"); err != nil || n != 0 {
				t.Errorf("Explain again = %d, %v; want nothing new", n, err)
			}
		})
	}
}

// TestDispatcher_ExplainClears: once a worker can serve the work, its reason is cleared,
// and a claim that came first in the log is never taken back by a later explanation.
func TestDispatcher_ExplainClears(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	f.fetch(t, "a.txt")
	if _, err := f.d.Explain(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	if e := f.opEntry(t, 1); e.ReasonCode != contract.CodeNoLiveWorker {
		t.Fatalf("Operation without a worker = %+v, want no_live_worker", e)
	}
	l := f.startup(t, "wkr-a")
	if n, err := f.d.Explain(ctx, "default"); err != nil || n != 1 {
		t.Fatalf("Explain with a worker = %d, %v; want the reason cleared", n, err)
	}
	if e := f.opEntry(t, 1); e.ReasonCode != "" || e.Reason != "" {
		t.Fatalf("Operation with a worker = %+v, want no reason", e)
	}
	rows := f.poll(t, l, fetchTool)
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatal(err)
	}
	infos, err := f.ops.OperationList(ctx, f.admin, "default", "", true)
	if err != nil || len(infos) != 1 || infos[0].Waiting != contract.WaitWorker {
		t.Errorf("OperationList(waiting) after the claim = %+v, %v; want it waiting at the worker, not for dispatch", infos, err)
	}
}

// TestDispatcher_WorkerRefusedSaysSo: a worker that claims work and reports it refused
// fails the Operation with reasonCode worker_refused and the worker's reason.
func TestDispatcher_WorkerRefusedSaysSo(t *testing.T) {
	f := newHopFixture(t)
	l := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	rows := f.poll(t, l, fetchTool)
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatal(err)
	}
	rep := contract.ReportRequest{ID: rows[0].ID, Code: contract.CodeToolUnknown, Reason: "this worker does not run test.fetch@1",
		WorkerID: l.WorkerID, Generation: l.Generation, Grant: rows[0].Grant}
	if _, err := f.d.Report(t.Context(), f.conn, rep); err != nil {
		t.Fatal(err)
	}
	if e := f.opEntry(t, 1); e.State != contract.OpFailed || e.ReasonCode != contract.CodeWorkerRefused || e.Reason != rep.Reason {
		t.Errorf("refused Operation = %+v, want failed, worker_refused, with the worker's reason", e)
	}
}
