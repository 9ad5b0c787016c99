package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
)

// threeServesSize is how much the three-serves test does: CI's size by default, the full
// size with DOCKET_THREE_SERVES_FULL=1 (benchmarks/README.md reports it).
type threeServesSize struct{ agents, actions, held int }

// TestServes_ThreeOneKilled runs three docket serve processes on one fresh PostgreSQL
// database, three docket worker processes of one Connection each given all three URLs,
// Agents spread over the serves (each an MCP client given all three), governed actions
// and held calls a member approves over /api/v1, and a schedule; one serve is killed
// with SIGKILL mid-run. Its clients move to the next serve (docs/deploy.md, "PostgreSQL
// with several serves"): every acknowledged action has exactly one receipt, the Tool's
// side effect happened once for each call that ran and never for one that did not,
// every call, held ones included, was answered, the schedule fired once per due time, and
// the log's chain verifies.
func TestServes_ThreeOneKilled(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	size := threeServesSize{agents: 12, actions: 200, held: 100}
	if os.Getenv("DOCKET_THREE_SERVES_FULL") == "1" {
		size = threeServesSize{agents: 48, actions: 2000, held: 1000}
	}
	db := pgTestDB(t)
	capDir := t.TempDir()
	writeFile(t, filepath.Join(capDir, "capability.toml"), markCapability, 0o644)
	serveArgs := []string{"--max-writes-per-minute", "1000000"}
	s := newServeEnv(t, db, capDir, "files", []string{"marked"}, markManifest, serveArgs...)
	writeFile(t, filepath.Join(filepath.Dir(s.man), "mark.sh"), markScript, 0o755)
	s.lock(t, "test.mark@1", "test.markheld@1")
	srvs, urls := []*proc{s.srv}, []string{s.url}
	for range 2 {
		p, u := s.startOtherServe(t, db, serveArgs...)
		srvs, urls = append(srvs, p), append(urls, u)
	}
	const killed = 1 // serve 0's data dir is the CLI's: it is kept
	s.docket(t, nil, "schedule", "create", "--agent", "one", "--every", "2s", "tick")

	var workers []*proc
	for i := range 3 {
		w := startProc(t, append(os.Environ(), "DOCKET_CONNECTION_KEY="+s.key, "DOCKET_HOME="+t.TempDir()),
			"worker", "--url", strings.Join(rotated(urls, i), ","), "--manifest", s.man, "--vault", s.vault, "--workspace-tools", "read-write")
		w.waitLine(t, "lease acquired")
		workers = append(workers, w)
	}
	agents := make([]*agentRun, size.agents)
	for i := range agents {
		var at contract.AgentToken
		s.docketJSON(t, &at, "agent", "create", fmt.Sprintf("a%d", i))
		sv, hc := servesClient(t, rotated(urls, i))
		c, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: sv.First() + "/mcp", Token: at.Token, HTTP: hc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		agents[i] = &agentRun{name: at.Agent.Name, id: string(at.Agent.ID), c: c}
	}
	tok, err := os.ReadFile(filepath.Join(s.home, datadir.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	_, memberHTTP := servesClient(t, urls)
	member := &apiclient.Client{URL: urls[0], Token: strings.TrimSpace(string(tok)), HTTP: memberHTTP}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	actx, stopApproving := context.WithCancel(ctx)
	var approving sync.WaitGroup
	approving.Go(func() { approveAll(actx, member) })
	defer func() { stopApproving(); approving.Wait() }()

	total := size.actions + size.held
	var mu sync.Mutex
	var outcomes []callOutcome
	results := make([][]callOutcome, len(agents))
	var killAt time.Time
	killOnce := sync.Once{}
	kill := func() {
		killAt = time.Now()
		if err := srvs[killed].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Error(err)
		}
	}
	errs := make(chan error, len(agents))
	start := time.Now()
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() {
			for j := i; j < total; j += len(agents) {
				o, err := a.call(ctx, fmt.Sprintf("k%d", j), j%3 == 2)
				if err != nil {
					errs <- err
					return
				}
				results[i] = append(results[i], o)
				mu.Lock()
				outcomes = append(outcomes, o)
				n := len(outcomes)
				mu.Unlock()
				if n == total*2/5 {
					killOnce.Do(kill)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	stopApproving()
	approving.Wait()
	if killAt.IsZero() {
		t.Fatal("the serve was never killed")
	}

	st, err := postgres.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The schedule fires every 2 s on whichever serve claims its due time; a run faster
	// than three of those has not yet shown fires on both sides of the kill, so the
	// check waits for them rather than depend on how long the calls took.
	waitForFires(t, st, 3)
	checkThreeServes(t, s, st, agents, results)

	// What the kill cost: answers lost, the workers' and clients' retries, and how long
	// the Agents whose serve died waited for their first answer after it.
	var plain, held []time.Duration
	lost, notRun, undelivered := 0, 0, 0
	for _, o := range outcomes {
		if o.held {
			held = append(held, o.took)
		} else {
			plain = append(plain, o.took)
		}
		if o.lost {
			lost++
		}
		if o.undelivered {
			undelivered++
		}
		if o.code == contract.CodeWorkerRefused {
			notRun++
		}
	}
	var recover []time.Duration
	for i := killed; i < len(agents); i += 3 {
		for _, o := range results[i] {
			if o.at.After(killAt) {
				recover = append(recover, o.at.Sub(killAt))
				break
			}
		}
	}
	var logs []string
	for _, w := range workers {
		logs = append(logs, w.log())
	}
	t.Logf("three serves on PostgreSQL, %d Agents, %d governed actions + %d held calls in %s: %.0f calls/s (%.0f governed actions/s); governed p50 %s p99 %s; held p50 %s p99 %s",
		len(agents), size.actions, size.held, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), float64(size.actions)/elapsed.Seconds(),
		percentile(plain, 50), percentile(plain, 99), percentile(held, 50), percentile(held, 99))
	t.Logf("the kill cost: %d answers lost (outcome read from the strip), %d calls sent again after previous_result_undelivered, %d calls not run (claim answer lost); workers: %d moves to the next serve, %d claims, %d reports, %d polls, %d renewals sent again; Agents of the killed serve: first answer after the kill in %s (median) / %s (slowest)",
		lost, undelivered, notRun, countLines(logs, "moving to the next"), countLines(logs, "claim unanswered"), countLines(logs, "report unanswered"),
		countLines(logs, "poll unanswered"), countLines(logs, "renewal unanswered"), percentile(recover, 50), percentile(recover, 100))
	t.Logf("between the serves, throughout the run: %d answers 503 to a worker (its call sent again after a second), %d claims refused (served again later)",
		countLines(logs, "status 503"), countLines(logs, `msg="claim refused"`))
	t.Logf("store commits in the same run: %.0f/s", commitRate(t, st))
	if testing.Verbose() {
		shown := 0
		for _, l := range strings.Split(strings.Join(logs, "\n"), "\n") {
			if shown < 12 && (strings.Contains(l, "unanswered") || strings.Contains(l, "moving to the next") || strings.Contains(l, "claim answer lost")) {
				t.Log(l)
				shown++
			}
		}
	}
}

// waitForFires waits, at most a minute, until the default project's log holds n
// schedule.fired events.
func waitForFires(t *testing.T, st store.Store, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := 0
		for e := range allEvents(t, st) {
			if e.Type == event.ScheduleFired {
				got++
			}
		}
		if got >= n || time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkThreeServes checks the record against what the clients were answered.
func checkThreeServes(t *testing.T, s *serveEnv, st store.Store, agents []*agentRun, results [][]callOutcome) {
	t.Helper()
	claims, reports := map[string]int{}, map[string]int{}
	type due struct {
		schedule contract.ScheduleID
		due      time.Time
	}
	fires := map[due]int{}
	for e := range allEvents(t, st) {
		switch e.Type {
		case event.WorkClaimed:
			var d event.WorkClaimedData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			claims[d.Work]++
		case event.WorkReported:
			var d event.WorkReportedData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			if !d.Judged {
				reports[d.Work]++
			}
		case event.ScheduleFired:
			var d event.ScheduleFiredData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			fires[due{d.Schedule, d.Due.UTC()}]++
		}
	}
	marks := map[string]int{}
	b, err := os.ReadFile(filepath.Join(s.files, "marks.log"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		marks[strings.TrimSpace(line)]++
	}
	for k, n := range marks {
		if n != 1 {
			t.Errorf("key %s marked %d times; a call runs at most once", k, n)
		}
	}
	for w, n := range claims {
		if n != 1 {
			t.Errorf("work %s claimed %d times", w, n)
		}
	}
	for i, a := range agents {
		for _, o := range results[i] {
			w := operation.WorkID(a.id, o.ordinal)
			switch {
			case o.state == contract.OpDone:
				if reports[w] != 1 || marks[o.key] != 1 {
					t.Errorf("%s (%s) done with %d receipts and %d marks; want one of each", o.key, w, reports[w], marks[o.key])
				}
			case o.code == contract.CodeWorkerRefused:
				// Its claim's answer was lost and the worker said so: nothing ran.
				if marks[o.key] != 0 || reports[w] != 1 {
					t.Errorf("%s (%s) not run, with %d marks and %d receipts; want none and one", o.key, w, marks[o.key], reports[w])
				}
			default:
				t.Errorf("%s (%s) = %s %s; want done, or not run after a lost claim", o.key, w, o.state, o.code)
			}
		}
	}
	if len(fires) < 3 {
		t.Errorf("the schedule fired %d times in a minute after the run, want one per 2 s", len(fires))
	}
	for d, n := range fires {
		if n != 1 {
			t.Errorf("schedule %s fired %d times for %s; want once", d.schedule, n, d.due)
		}
	}
	if out := s.docket(t, nil, "events", "verify"); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify = %q, want chain ok", out)
	}
}

// allEvents yields the default project's events from the store.
func allEvents(t *testing.T, st store.Store) func(func(store.Event) bool) {
	return func(yield func(store.Event) bool) {
		after := int64(0)
		for {
			evs, err := st.Events(t.Context(), "default", after, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				after = e.Seq
				if !yield(e) {
					return
				}
			}
			if len(evs) < 1000 {
				return
			}
		}
	}
}
