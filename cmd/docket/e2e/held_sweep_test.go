package e2e

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// TestServeWorker_HeldCallWokenBySweep holds an agent's ApplyAction at /mcp (the hold
// bound is a minute) while a real docket worker runs the claimed call, kills the worker
// with SIGKILL and starts no other. Only docket serve's lease sweep can settle the work
// then; the held call must wake with the Operation needing a person, long before the
// hold bound would have answered running.
func TestServeWorker_HeldCallWokenBySweep(t *testing.T) {
	const hold = time.Minute
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), hopCapability, 0o644)
	s := newServeEnv(t, "", capDir, "files", []string{"loaded", "blocked"}, hopManifest,
		"--lease-ttl", "2s", "--hold", hold.String())
	s.lock(t, "test.block@1")
	for _, f := range []string{"started.fifo", "go.fifo"} {
		if err := syscall.Mkfifo(filepath.Join(s.files, f), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	w := s.startWorker(t)
	gw := s.gateway(t)

	type answer struct {
		res agent.CallResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := gw.Call(t.Context(), "ApplyAction", json.RawMessage(`{"action": "block", "params": {"n": "1"}}`))
		answered <- answer{res, err}
	}()

	started, err := os.Open(filepath.Join(s.files, "started.fifo")) // returns once the program runs
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(started)
	started.Close()
	select {
	case a := <-answered:
		t.Fatalf("the call answered while its program ran, before the kill: %+v, %v", a.res, a.err)
	default:
	}
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-w.done
	release, err := os.OpenFile(filepath.Join(s.files, "go.fifo"), os.O_WRONLY, 0) // let the orphan end
	if err != nil {
		t.Fatal(err)
	}
	release.Close()

	// Half the hold bound: an answer after it could only be the bound's "running".
	bound := time.NewTimer(hold / 2)
	defer bound.Stop()
	var a answer
	select {
	case a = <-answered:
	case <-bound.C:
		t.Fatalf("the held call did not answer within %s of the kill; serve said:\n%s", hold/2, s.srv.log())
	}
	t.Logf("held call answered %s after the worker was killed", time.Since(killed).Round(time.Millisecond))
	if a.err != nil {
		t.Fatalf("held ApplyAction: %v", a.err)
	}
	var res contract.ToolResult
	if err := json.Unmarshal([]byte(a.res.Text), &res); err != nil {
		t.Fatalf("held ApplyAction answer: %v\n%s", err, a.res.Text)
	}
	if len(res.Operations) == 0 || res.Operations[0].State != contract.OpNeedsPerson || !strings.Contains(res.Operations[0].Reason, "lost its lease") {
		t.Fatalf("held ApplyAction answer's strip = %+v, want needs_person first, naming the lost lease", res.Operations)
	}
	for _, op := range res.Operations {
		if op.State == contract.OpRunning {
			t.Errorf("held ApplyAction answer's strip has an Operation still running: %+v", op)
		}
	}
	strip, err := gw.Strip(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(strip) == 0 || strip[0].Ordinal != a.res.Ordinal || strip[0].State != contract.OpNeedsPerson {
		t.Errorf("strip after the answer = %+v, want operation %d needs_person first", strip, a.res.Ordinal)
	}
	runs, _ := os.ReadFile(filepath.Join(s.files, "runs.log"))
	if n := strings.Count(string(runs), "run"); n != 1 {
		t.Errorf("the program ran %d times, want once", n)
	}
}
