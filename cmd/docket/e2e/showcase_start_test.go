package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// TestStart_ShippedScriptCertifies: the example's own script.json, unchanged but for its
// job's file, run by the scripted model under a real docket start, closes the verified
// calculation's Case certified, with the write needing a person or not. While the write
// waits for the decision the task says what it waits on, never the script's last line;
// once a member approves, the runtime is woken and the script goes on from the write.
func TestStart_ShippedScriptCertifies(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	tests := []struct {
		name    string
		capDir  func(*testing.T) string
		approve bool
	}{
		{"the write needs a person", approvedCalculation, true},
		{"no write needs a person", func(*testing.T) string { return verifiedCalculation }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStartEnv(t)
			start, _, _ := s.run(t, "--listen", "127.0.0.1:0")
			s.setUpCalculation(t, tt.capDir(t))
			b, err := os.ReadFile("../../../examples/verified-calculation/script.json")
			if err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(t.TempDir(), "script.json")
			writeFile(t, script, strings.ReplaceAll(string(b), "data/input.json", "data/calc-001.json"), 0o600)
			s.docket(t, nil, "agent", "create", "calc")
			s.docket(t, nil, "agent", "profile", "set", "calc", "--provider", "scripted", "--script", script)
			s.profiles(t, "calc's runtime running", running("calc"))

			var task contract.Task
			s.docketJSON(t, &task, "task", "post", "--agent", "calc", "--case-type", "verified_calculation", "--key", "job_id=calc-001",
				"Run the verified calculation for job calc-001.")
			if tt.approve {
				w := s.taskIn(t, task.ID, contract.TaskWaiting)
				if len(w.Waiting) != 1 || w.Waiting[0].Tool != "ApplyAction" {
					t.Errorf("the waiting task waits on %+v, want the write", w.Waiting)
				}
				if w.Result == nil || !strings.Contains(w.Result.Final, "write_result") || !strings.Contains(w.Result.Final, "waiting for decision") ||
					strings.Contains(w.Result.Final, "closed as completed") {
					t.Errorf("the waiting task says %+v, want what it waits on, not the script's last line", w.Result)
				}
				if out := s.docket(t, nil, "task", "show", string(task.ID)); !strings.Contains(out, "waits on ApplyAction") || !strings.Contains(out, "said before the wait:") || strings.Contains(out, "final:") {
					t.Errorf("docket task show = %q, want what the task waits on, and its words as said before the wait", out)
				}
				var rs []contract.Request
				s.docketJSON(t, &rs, "requests")
				if len(rs) != 1 {
					t.Fatalf("docket requests = %+v, want the write's request", rs)
				}
				s.docket(t, nil, "decide", string(rs[0].ID), "approve", "--digest", rs[0].Digest)
			}
			done := s.finished(t, task.ID)
			if done.State != contract.TaskCompleted || done.Result == nil || len(done.Result.ClosedCases) != 1 ||
				done.Result.ClosedCases[0].Disposition != contract.DispositionCompleted {
				t.Fatalf("the task = %+v (result %+v), want it completed with its Case closed completed", done, done.Result)
			}
			if !strings.Contains(done.Result.Final, "closed as completed") {
				t.Errorf("the finished task says %q, want the script's last line", done.Result.Final)
			}
			var cs contract.CaseDetail
			s.docketJSON(t, &cs, "case", "show", string(done.Result.ClosedCases[0].CaseID))
			if cs.Status != contract.CaseClosed || cs.Receipt == nil || !cs.Receipt.Certified {
				t.Errorf("the Case = %+v, want closed and certified", cs)
			}
			s.stop(t, start)
		})
	}
}

// taskIn waits until the task id is in state, read with docket task show.
func (s *startEnv) taskIn(t *testing.T, id contract.TaskID, state contract.TaskState) contract.Task {
	t.Helper()
	var tk contract.Task
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		s.docketJSON(t, &tk, "task", "show", string(id))
		if tk.State == state {
			return tk
		}
	}
	t.Fatalf("task %s never became %s: %+v", id, state, tk)
	return tk
}
