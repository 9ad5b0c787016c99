package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// scheduleEnv is a data dir served by a real docket serve with Agent calc.
type scheduleEnv struct{ *serveEnv }

func newScheduleEnv(t *testing.T, serveArgs ...string) scheduleEnv {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	s := &serveEnv{home: home, env: slices.Clip(append(os.Environ(), "DOCKET_HOME="+home)),
		serveArgs: append([]string{"--listen", "127.0.0.1:0"}, serveArgs...)}
	s.docket(t, []string{"DOCKET_PASSPHRASE=correct horse battery"}, "init")
	s.startServe(t)
	s.docket(t, nil, "agent", "create", "calc")
	return scheduleEnv{s}
}

// events returns the project's events of typ, read with docket events tail -o json.
func (s scheduleEnv) events(t *testing.T, typ string) []contract.Event {
	t.Helper()
	var out []contract.Event
	for line := range strings.Lines(s.docket(t, nil, "events", "tail", "--type", typ, "-o", "json")) {
		var e contract.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events tail line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// stopServe ends serve with SIGINT, as a person's Ctrl-C, and waits for it.
func (s scheduleEnv) stopServe(t *testing.T) {
	t.Helper()
	if err := s.srv.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-s.srv.done
	if err := s.srv.cmd.Wait(); err != nil {
		t.Fatalf("docket serve after SIGINT: %v\n%s", err, s.srv.log())
	}
}

func fireData[T any](t *testing.T, e contract.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Data, &v); err != nil {
		t.Fatalf("%s data %s: %v", e.Type, e.Data, err)
	}
	return v
}

// TestServe_ScheduleFires: a schedule with a real one-second interval fires under docket
// serve, each fire a task for the Agent that schedule.fired names; serve is stopped for
// five seconds and started again; what fell due meanwhile follows each schedule's policy
// (skip: not run; run_once: run once), and no due time is fired twice, across the restart.
func TestServe_ScheduleFires(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	// A grace under the interval, so that a fire the restart comes late for is missed,
	// and the two policies part.
	s := newScheduleEnv(t, "--schedule-grace", "500ms")
	var skip, once contract.Schedule
	s.docketJSON(t, &skip, "schedule", "create", "--agent", "calc", "--every", "1s", "--missed", "skip", "Tidy the workspace.")
	s.docketJSON(t, &once, "schedule", "create", "--agent", "calc", "--every", "2s", "--missed", "run_once", "Send the report.")

	follow := startProc(t, s.env, "events", "tail", "--follow", "--type", event.ScheduleFired)
	follow.waitLine(t, string(skip.ID))
	follow.waitLine(t, string(once.ID))
	fired := s.events(t, event.ScheduleFired)
	posted := map[contract.TaskID]contract.Task{}
	for _, e := range s.events(t, event.TaskPosted) {
		p := fireData[event.TaskPostedData](t, e)
		posted[p.Task.ID] = p.Task
	}
	f := fireData[contract.ScheduleFire](t, fired[0])
	if task, ok := posted[f.Task]; !ok || task.Text == "" || f.Outcome != contract.FirePosted || f.Kind != contract.FireDue {
		t.Fatalf("first fire %+v: its task %s is not among the posted tasks", f, f.Task)
	}

	last := s.events(t, event.ScheduleFired)
	after := strconv.FormatInt(last[len(last)-1].Seq, 10)
	s.stopServe(t)
	stopped := time.Now()
	// The downtime is the scenario: real due times pass while no serve runs.
	down := time.NewTimer(5 * time.Second)
	<-down.C
	s.startServe(t)
	restarted := time.Now()
	missed := startProc(t, s.env, "events", "tail", "--follow", "--type", event.ScheduleMissed)
	missed.waitLine(t, string(skip.ID))
	missed.waitLine(t, string(once.ID))
	// Both schedules fire on after the restart; by then the restart's own fires are in.
	follow = startProc(t, s.env, "events", "tail", "--follow", "--type", event.ScheduleFired, "--after", after)
	follow.waitLine(t, string(skip.ID))
	follow.waitLine(t, string(once.ID))

	fires := map[contract.ScheduleID][]contract.ScheduleFire{}
	seen := map[string]bool{}
	for _, e := range s.events(t, event.ScheduleFired) {
		f := fireData[contract.ScheduleFire](t, e)
		key := string(f.Schedule) + f.Due.String()
		if seen[key] {
			t.Errorf("due time %s of %s fired twice", f.Due, f.Schedule)
		}
		seen[key] = true
		fires[f.Schedule] = append(fires[f.Schedule], f)
	}
	tasks := map[string]int{}
	for _, e := range s.events(t, event.TaskPosted) {
		tasks[fireData[event.TaskPostedData](t, e).Task.ClientKey]++
	}
	for key, n := range tasks {
		if n != 1 {
			t.Errorf("client key %s posted %d tasks; want one", key, n)
		}
	}
	// The downtime's missed fires are in the first schedule.missed of each schedule after
	// the stop (a sweep made late by a busy machine may record others, before or after).
	byPolicy := map[contract.MissedPolicy]event.ScheduleMissedData{}
	for _, e := range s.events(t, event.ScheduleMissed) {
		m := fireData[event.ScheduleMissedData](t, e)
		if _, ok := byPolicy[m.Policy]; ok || e.At.Before(stopped) {
			continue
		}
		if m.Count < 1 || m.Last.After(e.At) || m.Last.Before(stopped) {
			t.Errorf("missed %+v at %s: not the fires due while serve was down (%s to %s)", m, e.At, stopped, restarted)
		}
		byPolicy[m.Policy] = m
	}
	in := func(f contract.ScheduleFire, m event.ScheduleMissedData) bool {
		return !f.Due.Before(m.First) && !f.Due.After(m.Last)
	}
	m := byPolicy[contract.MissedSkip]
	for _, f := range fires[skip.ID] {
		if in(f, m) || f.Kind == contract.FireCatchUp {
			t.Errorf("skip schedule fired %+v, which its policy skipped (%+v)", f, m)
		}
	}
	m = byPolicy[contract.MissedRunOnce]
	if m.RunAt == nil {
		t.Fatalf("run_once schedule's missed fires %+v name no fire run for them", m)
	}
	var ranFor []contract.ScheduleFire
	for _, f := range fires[once.ID] {
		if f.Due.Equal(*m.RunAt) {
			ranFor = append(ranFor, f)
		}
		if in(f, m) {
			t.Errorf("run_once schedule fired %+v, a due time it recorded missed (%+v)", f, m)
		}
	}
	if len(ranFor) != 1 || ranFor[0].Task == "" {
		t.Errorf("run_once schedule's fires at %s = %+v; want one with its task", m.RunAt, ranFor)
	}
	t.Logf("down %s; skip missed %d, run_once missed %d and ran %s (%s)", restarted.Sub(stopped).Round(time.Millisecond),
		byPolicy[contract.MissedSkip].Count, m.Count, m.RunAt, ranFor[0].Kind)
}

// TestSchedule_FireCancelled: cancelling the task a schedule's fire posted is the fire's
// cancel: the fire's outcome becomes cancelled.
func TestSchedule_FireCancelled(t *testing.T) {
	s := newScheduleEnv(t)
	var sc contract.Schedule
	s.docketJSON(t, &sc, "schedule", "create", "--agent", "calc", "--every", "24h", "Send the report.")
	var fire contract.ScheduleFire
	s.docketJSON(t, &fire, "schedule", "run-now", string(sc.ID))
	if fire.Task == "" {
		t.Fatalf("run-now = %+v, want a fire with its task", fire)
	}
	var task contract.Task
	s.docketJSON(t, &task, "task", "cancel", string(fire.Task))
	if task.State != contract.TaskCancelled {
		t.Fatalf("cancel of the fire's task = %+v, want it cancelled at once: no runtime took it", task)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var shown contract.Schedule
		s.docketJSON(t, &shown, "schedule", "show", string(sc.ID))
		if len(shown.LastFires) > 0 && shown.LastFires[0].Outcome == string(contract.TaskCancelled) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s = %+v, want its fire's outcome cancelled", sc.ID, shown.LastFires)
		}
	}
	if text := s.docket(t, nil, "schedule", "show", string(sc.ID)); !strings.Contains(text, "cancelled") {
		t.Errorf("docket schedule show =\n%s\nwant the fire cancelled", text)
	}
}
