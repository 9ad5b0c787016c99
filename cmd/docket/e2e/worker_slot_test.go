package e2e

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestWorker_SlotFreedOnceRun: a row frees its --parallel slot once it has run, not once
// its report is answered. With --parallel 1 and the first row's report held unanswered
// by the authority, the worker polls, claims and runs the next queued row meanwhile;
// then both reports land, each row run and reported once. A worker that kept the slot
// until the report's answer would claim nothing while the report waited.
func TestWorker_SlotFreedOnceRun(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	hold := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"kind":"Report"`)) {
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
	letGo()
	for i := range 2 {
		if e := h.waitOp(t, i, "done", func(e contract.OperationEntry) bool { return e.State.Settled() }); e.State != contract.OpDone {
			t.Fatalf("call %d = %+v, want done", i, e)
		}
	}
	for typ, want := range map[string]int{event.WorkClaimed: 2, event.WorkReported: 2} {
		if n := h.events(t, typ); n != want {
			t.Errorf("%s events = %d, want %d", typ, n, want)
		}
	}
}
