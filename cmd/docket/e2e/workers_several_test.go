package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// startWorkerWith starts a docket worker for h's Connection with extra flags.
func (h *hopEnv) startWorkerWith(t testing.TB, extra ...string) *proc {
	t.Helper()
	args := append([]string{"worker", "--url", h.url, "--manifest", h.man, "--vault", h.vault, "--workspace-tools", "read-write", "--log-level", "debug"}, extra...)
	return startProc(t, append(os.Environ(), "DOCKET_CONNECTION_KEY="+h.key, "DOCKET_HOME="+t.TempDir()), args...)
}

// claims returns the project's work.claimed events.
func (h *hopEnv) claims(t testing.TB) []event.WorkClaimedData {
	t.Helper()
	var out []event.WorkClaimedData
	after := int64(0)
	for {
		evs, err := h.st.Events(t.Context(), "default", after, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			after = e.Seq
			if e.Type != event.WorkClaimed {
				continue
			}
			var d event.WorkClaimedData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		if len(evs) < 500 {
			return out
		}
	}
}

// TestWorkers_SeveralKilledMidCall: two docket worker processes take one Connection's
// work at once, each under a lease of its own, and each runs a call at the same time.
// One is killed mid-call: the call it claimed needs a person (its program ran once and is
// never run again), and every other call is run once by the worker that lives. See
// docs/workers.md (Several workers per Connection).
func TestWorkers_SeveralKilledMidCall(t *testing.T) {
	h := newBlockEnv(t)
	started := h.blockStarts(t)
	ctx := t.Context()
	for _, name := range []string{"three", "four"} {
		at, err := h.a.Directory().CreateAgent(ctx, h.admin, "default", contract.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.a.Directory().Authenticate(ctx, identity.Token(at.Token))
		if err != nil {
			t.Fatal(err)
		}
		h.agents = append(h.agents, c)
	}
	w1 := h.startWorkerWith(t, "--parallel", "1")
	w2 := h.startWorkerWith(t, "--parallel", "1")
	w1.waitLine(t, "lease acquired")
	w2.waitLine(t, "lease acquired")
	works := map[string]int{}
	for i := range h.agents {
		works[h.apply(t, i, "block", contract.Args{"n": contract.StringValue("1")})] = i
	}
	// One call runs on each worker: with --parallel 1 each asks for one row at a time.
	waitStarts(t, started, 2)
	cl := h.claims(t)
	if len(cl) != 2 || cl[0].WorkerID == cl[1].WorkerID || cl[0].Generation == cl[1].Generation {
		t.Fatalf("claims while two calls run = %+v; want one by each worker, under leases of their own", cl)
	}
	// Both leases are listed, each held by its own worker (the Workers page, doctor and
	// the lease gauge read them from here).
	if ls := h.leases(t); len(ls) != 2 || ls[0].State != contract.LeaseHeld || ls[1].State != contract.LeaseHeld || ls[0].WorkerID == ls[1].WorkerID {
		t.Fatalf("the Connection's leases while two workers run = %+v; want two held, one by each", ls)
	}
	var killed event.WorkClaimedData
	for _, c := range cl {
		if strings.Contains(w1.log(), c.WorkerID) {
			killed = c
		}
	}
	if killed.Work == "" {
		t.Fatalf("no claim %+v names the first worker:\n%s", cl, w1.log())
	}
	if err := w1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-w1.done
	// Let the programs go until every call settled: the killed worker's as needs_person
	// (once its lease lapses and the sweep runs), the others done by the live worker.
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var entries map[string]contract.OperationEntry
	for {
		h.letBlocksGo()
		entries = map[string]contract.OperationEntry{}
		settled := 0
		for id, i := range works {
			st, err := h.ops.Operations().State(ctx, h.agents[i])
			if err != nil {
				t.Fatal(err)
			}
			e := st.State[0].OperationEntry
			entries[id] = e
			if e.State.Settled() || e.State == contract.OpNeedsPerson {
				settled++
			}
		}
		if settled == len(works) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls not settled within a minute: %+v", entries)
		}
		<-tick.C
	}
	for id, e := range entries {
		want := contract.OpDone
		if id == killed.Work {
			want = contract.OpNeedsPerson
		}
		if e.State != want {
			t.Errorf("Operation %s = %+v; want %s", id, e, want)
		}
	}
	if e := entries[killed.Work]; e.ReasonCode != contract.CodeWorkerLost {
		t.Errorf("the killed worker's Operation = %+v; want reasonCode worker_lost", e)
	}
	// The killed worker's lease ran out; the live one's is still held.
	for _, l := range h.leases(t) {
		if want := l.WorkerID != killed.WorkerID; (l.State == contract.LeaseHeld) != want {
			t.Errorf("lease %+v after the kill of %s; want held only by the worker that lives", l, killed.WorkerID)
		}
	}
	if n := h.blockRuns(t); n != len(works) {
		t.Errorf("the program ran %d times for %d calls; want each once", n, len(works))
	}
	seen := map[string]bool{}
	for _, c := range h.claims(t) {
		if seen[c.Work] {
			t.Errorf("work %s claimed twice", c.Work)
		}
		seen[c.Work] = true
	}
	if len(seen) != len(works) {
		t.Errorf("%d works claimed, want %d", len(seen), len(works))
	}
}

// leases returns the leases of h's Connection as the authority lists them.
func (h *hopEnv) leases(t testing.TB) []contract.WorkerLease {
	t.Helper()
	ws, err := h.a.Workers(t.Context(), h.admin, "default")
	if err != nil || len(ws) != 1 {
		t.Fatalf("Workers = %+v, %v; want the one Connection", ws, err)
	}
	return ws[0].Leases
}
