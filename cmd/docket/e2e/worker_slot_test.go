package e2e

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestWorker_SlotFreedOnceRun: a row frees its --parallel slot once it has run, not once
// its report is answered, and no more than --parallel reports wait for their answer.
// With --parallel 1 and the first row's report held unanswered by the authority, the
// worker polls, claims and runs the next queued row meanwhile; that row, having run,
// waits for the one report place, so a third row stays queued and no second report is
// sent; then all reports land, each row run and reported once. A worker that kept the
// slot until the report's answer would claim nothing while the report waited; one with
// no bound on waiting reports would claim the third row too.
func TestWorker_SlotFreedOnceRun(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	var reports atomic.Int32
	hold := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"kind":"Report"`)) {
				reports.Add(1)
				first := false
				once.Do(func() { first = true })
				if first {
					<-release // the first report waits, unanswered, until the test lets it go
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	h := newHopEnv(t, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, hold)
	letGo := sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo) // run before the server closes: a held report must not keep it open
	h.lock(t, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
	w := h.startWorkerWith(t, "--parallel", "1")
	w.waitLine(t, "lease acquired")
	args := contract.Args{"path": contract.StringValue("data/input.json")}
	h.apply(t, 0, "load", args)
	h.waitOp(t, 0, "claimed", func(e contract.OperationEntry) bool { return e.Stage == contract.StageAtWorker })
	h.apply(t, 1, "load", args)
	// Claimed while the first report waits: the one slot was free once the first row ran.
	h.waitOp(t, 1, "claimed while the first report waits", func(e contract.OperationEntry) bool {
		return e.Stage == contract.StageAtWorker || e.State.Settled()
	})
	if e := h.waitOp(t, 0, "still at the worker", func(contract.OperationEntry) bool { return true }); e.State.Settled() {
		t.Fatalf("the first call = %+v before its report was let go, want still at the worker", e)
	}
	h.addAgents(t, 3)
	h.apply(t, 2, "load", args)
	// The second row ran and waits for the first report's place, holding the one slot:
	// the third is not claimed, and no second report goes out. A worker with no bound
	// would claim it within a poll; a wait cannot fail a correct worker.
	time.Sleep(500 * time.Millisecond)
	if e := h.waitOp(t, 2, "queued", func(contract.OperationEntry) bool { return true }); e.Stage == contract.StageAtWorker || e.State.Settled() {
		t.Fatalf("the third call = %+v while the first report waits and the second waits to report, want queued", e)
	}
	if n := reports.Load(); n != 1 {
		t.Fatalf("reports sent while the first waits = %d, want 1", n)
	}
	letGo()
	for i := range 3 {
		if e := h.waitOp(t, i, "done", func(e contract.OperationEntry) bool { return e.State.Settled() }); e.State != contract.OpDone {
			t.Fatalf("call %d = %+v, want done", i, e)
		}
	}
	for typ, want := range map[string]int{event.WorkClaimed: 3, event.WorkReported: 3} {
		if n := h.events(t, typ); n != want {
			t.Errorf("%s events = %d, want %d", typ, n, want)
		}
	}
}
