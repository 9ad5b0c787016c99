package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestWorker_ClaimAnswerLost: the first claim's connection is cut before its answer, as
// when the serve it reached is killed (one of several over one store). Taken before the
// cut, the call would wait at this worker under its live lease, which no sweep settles:
// the worker sends the claim again, is refused work_taken, and reports the call as not
// run, so the Operation fails and its held call is answered; the Tool never ran. Not
// taken, the claim sent again is the claim: the call runs once.
func TestWorker_ClaimAnswerLost(t *testing.T) {
	tests := []struct {
		name      string
		committed bool // the cut claim was taken by the authority before the cut
		want      contract.OperationState
		code      contract.Code
		reported  int
	}{
		{"taken before the cut: reported not run", true, contract.OpFailed, contract.CodeWorkerRefused, 1},
		{"cut before it was taken: the retry claims it", false, contract.OpDone, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var once sync.Once
			cut := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					dropped := false
					if bytes.Contains(body, []byte(`"kind":"Claim"`)) {
						once.Do(func() {
							if tt.committed {
								next.ServeHTTP(httptest.NewRecorder(), r) // taken, the answer never sent
							}
							if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
								conn.Close()
							}
							dropped = true
						})
					}
					if !dropped {
						next.ServeHTTP(w, r)
					}
				})
			}
			h := newHopEnv(t, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, cut)
			h.lock(t, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
			w := h.startWorker(t)
			h.apply(t, 0, "load", contract.Args{"path": contract.StringValue("data/input.json")})
			e := h.waitOp(t, 0, "settled", func(e contract.OperationEntry) bool { return e.State.Settled() })
			if e.State != tt.want || (tt.code != "" && e.ReasonCode != tt.code) {
				t.Fatalf("load = %+v, want %s %s", e, tt.want, tt.code)
			}
			w.waitLine(t, "msg=reported")
			if !strings.Contains(w.log(), "claim unanswered") {
				t.Errorf("the worker never sent its claim again:\n%s", w.log())
			}
			if tt.committed && strings.Contains(w.log(), "tool call failed") {
				t.Errorf("the worker ran a call whose claim it could not confirm:\n%s", w.log())
			}
			if n := h.events(t, event.WorkClaimed); n != 1 {
				t.Errorf("work.claimed events = %d, want 1", n)
			}
			if n := h.events(t, event.WorkReported); n != tt.reported {
				t.Errorf("work.reported events = %d, want %d", n, tt.reported)
			}
		})
	}
}
