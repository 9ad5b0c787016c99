package authority_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/schedule"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// schedFixture is the ops fixture (member ada, Agent calc, a fake clock at 03:00 UTC) with
// its schedules.
type schedFixture struct {
	*opsFixture
	s *schedule.Keeper
}

func newSchedFixture(t *testing.T) *schedFixture {
	t.Helper()
	f := newOpsFixture(t, time.Millisecond)
	s, err := authority.NewSchedules(f.a, authority.SchedulesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return &schedFixture{opsFixture: f, s: s}
}

func (f *schedFixture) create(t *testing.T, req contract.CreateScheduleRequest) contract.Schedule {
	t.Helper()
	if req.Task.Agent == "" {
		req.Task = contract.TaskRequest{Agent: "calc", Text: "Tidy the workspace."}
	}
	s, err := f.s.Create(t.Context(), f.admin, "default", req)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *schedFixture) sweep(t *testing.T) int {
	t.Helper()
	n, err := f.s.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// events returns the data of project default's events of type typ, in order.
func (f *schedFixture) events(t *testing.T, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	es, err := f.st.Events(t.Context(), "default", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Type != typ {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (f *schedFixture) tasks(t *testing.T) []contract.Task {
	t.Helper()
	ts, err := f.a.Tasks(t.Context(), f.admin, "default", "calc")
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestSchedules_CreateRefused: each part that does not parse is refused with its code and
// a sentence that names the field.
func TestSchedules_CreateRefused(t *testing.T) {
	f := newSchedFixture(t)
	task := contract.TaskRequest{Agent: "calc", Text: "x"}
	tests := []struct {
		name  string
		req   contract.CreateScheduleRequest
		code  contract.Code
		names string // in the teaching
	}{
		{"a minute out of range", contract.CreateScheduleRequest{Cron: "61 9 * * *", Task: task}, contract.CodeInvalidSchedule, "the minute \"61\""},
		{"a bad day of week", contract.CreateScheduleRequest{Cron: "0 9 * * someday", Task: task}, contract.CodeInvalidSchedule, "the day of week \"someday\""},
		{"four fields", contract.CreateScheduleRequest{Cron: "0 9 * *", Task: task}, contract.CodeInvalidSchedule, "five fields"},
		{"an unknown zone", contract.CreateScheduleRequest{Cron: "@daily", TimeZone: "Europe/Atlantis", Task: task}, contract.CodeInvalidSchedule, "the zone"},
		{"an interval that is no duration", contract.CreateScheduleRequest{Every: "hourly", Task: task}, contract.CodeInvalidSchedule, "the every"},
		{"an interval too short", contract.CreateScheduleRequest{Every: "10ms", Task: task}, contract.CodeInvalidSchedule, "the every"},
		{"both", contract.CreateScheduleRequest{Cron: "@daily", Every: "1h", Task: task}, contract.CodeInvalidSchedule, "not both"},
		{"an unknown policy", contract.CreateScheduleRequest{Every: "1h", Missed: "twice", Task: task}, contract.CodeInvalidSchedule, "run_once"},
		{"no text", contract.CreateScheduleRequest{Every: "1h", Task: contract.TaskRequest{Agent: "calc"}}, contract.CodeInvalidArgument, "text"},
		{"a client key", contract.CreateScheduleRequest{Every: "1h", Task: contract.TaskRequest{Agent: "calc", Text: "x", ClientKey: "k"}}, contract.CodeInvalidArgument, "client key"},
		{"an unknown agent", contract.CreateScheduleRequest{Every: "1h", Task: contract.TaskRequest{Agent: "nobody", Text: "x"}}, contract.CodeNotFound, "nobody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.s.Create(t.Context(), f.admin, "default", tt.req)
			wantCode(t, err, tt.code)
			if ce, ok := errors.AsType[*contract.Error](err); !ok || !strings.Contains(ce.Teaching, tt.names) {
				t.Errorf("teaching of %v does not name %q", err, tt.names)
			}
		})
	}
	t.Run("an Agent makes no schedule", func(t *testing.T) {
		_, err := f.s.Create(t.Context(), f.agent, "default", contract.CreateScheduleRequest{Every: "1h", Task: task})
		wantCode(t, err, contract.CodeForbidden)
	})
}

// TestSchedules_Fire: a schedule fires at its due time on the fake clock, once: the fire
// creates a task as the member, names it in schedule.fired, and a second sweep, or a
// second authority over the same store (a restart), does not fire it again.
func TestSchedules_Fire(t *testing.T) {
	f := newSchedFixture(t)
	ctx := t.Context()
	created := f.create(t, contract.CreateScheduleRequest{Every: "1h", Task: contract.TaskRequest{Agent: "calc", Text: "Tidy the workspace."}})
	t0 := f.clock.Now()
	if created.NextFire == nil || !created.NextFire.Equal(t0.Add(time.Hour)) || created.State != contract.ScheduleActive {
		t.Fatalf("created = %+v; want active, next fire at %s", created, t0.Add(time.Hour))
	}
	f.clock.Add(59 * time.Minute)
	if n := f.sweep(t); n != 0 {
		t.Fatalf("a sweep before the due time fired %d", n)
	}
	f.clock.Add(time.Minute + 2*time.Second)
	if n := f.sweep(t); n != 1 {
		t.Fatalf("the sweep at the due time fired %d; want 1", n)
	}
	if n := f.sweep(t); n != 0 {
		t.Fatalf("a second sweep at the same time fired %d", n)
	}
	restarted := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	again, err := authority.NewSchedules(restarted, authority.SchedulesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := again.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("a restarted authority's sweep fired %d, %v; want 0", n, err)
	}
	ts := f.tasks(t)
	if len(ts) != 1 || ts[0].Text != "Tidy the workspace." || ts[0].PostedBy != f.admin.Principal() {
		t.Fatalf("tasks = %+v; want one, posted as ada", ts)
	}
	shown, err := f.s.Schedule(ctx, f.admin, "default", created.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.ScheduleFire{{Schedule: created.ID, Agent: contract.AgentID(f.agent.ID), Due: t0.Add(time.Hour), FiredAt: t0.Add(time.Hour + 2*time.Second),
		Kind: contract.FireDue, Task: ts[0].ID, Outcome: contract.FirePosted}}
	if diff := cmp.Diff(want, shown.LastFires); diff != "" {
		t.Errorf("last fires (-want +got):\n%s", diff)
	}
	if !shown.NextFire.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("next fire = %s; want %s", shown.NextFire, t0.Add(2*time.Hour))
	}
	fired := f.events(t, event.ScheduleFired)
	if len(fired) != 1 || fired[0]["task"] != string(ts[0].ID) || fired[0]["kind"] != "due" || fired[0]["agent"] != f.agent.ID {
		t.Errorf("schedule.fired events = %v; want one naming task %s", fired, ts[0].ID)
	}
	if got := f.events(t, event.ScheduleCreated); len(got) != 1 {
		t.Errorf("schedule.created events = %v; want one", got)
	}

	// The task's outcome, once its runtime reports it, is the fire's.
	claim, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{})
	if err != nil || claim.Task == nil {
		t.Fatalf("ClaimTask = %+v, %v", claim, err)
	}
	if _, err := f.a.ReportTask(ctx, f.agent, claim.Task.ID, contract.TaskReport{Attempt: claim.Task.Attempt, State: contract.TaskCompleted,
		TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}}); err != nil {
		t.Fatal(err)
	}
	f.sweep(t)
	shown, err = f.s.Schedule(ctx, f.admin, "default", created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := shown.LastFires[0].Outcome; got != string(contract.TaskCompleted) {
		t.Errorf("fire outcome after the report = %q; want completed", got)
	}
	if got := f.events(t, event.ScheduleOutcome); len(got) != 1 || got[0]["outcome"] != "completed" {
		t.Errorf("schedule.outcome events = %v; want one, completed", got)
	}
	f.sweep(t)
	if got := f.events(t, event.ScheduleOutcome); len(got) != 1 {
		t.Errorf("schedule.outcome events after another sweep = %d; want still one", len(got))
	}
}

// TestSchedules_Missed: the authority is down for three and a half hours over an hourly
// schedule. Under skip nothing runs and the four due times are recorded missed; under
// run_once one catch-up fire runs for the latest and the three before it are recorded
// missed. Back within the grace of a due time, both run that one on time.
func TestSchedules_Missed(t *testing.T) {
	tests := []struct {
		name       string
		policy     contract.MissedPolicy
		down       time.Duration
		wantFires  []string // kinds
		wantMissed float64
	}{
		{"skip, back long after a due time", contract.MissedSkip, 3*time.Hour + 30*time.Minute, nil, 3},
		{"run_once, back long after a due time", contract.MissedRunOnce, 3*time.Hour + 30*time.Minute, []string{contract.FireCatchUp}, 2},
		{"skip, back just after a due time", contract.MissedSkip, 3*time.Hour + 10*time.Second, []string{contract.FireDue}, 2},
		{"run_once, back just after a due time", contract.MissedRunOnce, 3*time.Hour + 10*time.Second, []string{contract.FireDue}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSchedFixture(t)
			s := f.create(t, contract.CreateScheduleRequest{Every: "1h", Missed: tt.policy})
			f.clock.Add(time.Hour + time.Second)
			if n := f.sweep(t); n != 1 {
				t.Fatalf("the first due time fired %d; want 1", n)
			}
			f.clock.Add(tt.down) // serve is down: no sweep runs
			f.sweep(t)
			shown, err := f.s.Schedule(t.Context(), f.admin, "default", s.ID)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, fire := range shown.LastFires[:len(shown.LastFires)-1] { // less the first, on time
				kinds = append(kinds, fire.Kind)
			}
			if diff := cmp.Diff(tt.wantFires, kinds); diff != "" {
				t.Errorf("fires after the downtime (-want +got):\n%s", diff)
			}
			missed := f.events(t, event.ScheduleMissed)
			if len(missed) != 1 || missed[0]["count"] != tt.wantMissed || missed[0]["policy"] != string(tt.policy) {
				t.Errorf("schedule.missed = %v; want one of %v fires under %s", missed, tt.wantMissed, tt.policy)
			}
			if got, want := len(f.tasks(t)), 1+len(tt.wantFires); got != want {
				t.Errorf("tasks = %d; want %d", got, want)
			}
		})
	}
}

// TestSchedules_PauseResumeDelete: a paused schedule does not fire, and resumes from now,
// not catching up; run-now fires it paused or not; a deleted one is gone from the list.
func TestSchedules_PauseResumeDelete(t *testing.T) {
	f := newSchedFixture(t)
	ctx := t.Context()
	s := f.create(t, contract.CreateScheduleRequest{Cron: "0 * * * *", TimeZone: "Europe/Berlin", Missed: contract.MissedRunOnce})
	paused, err := f.s.Pause(ctx, f.admin, "default", s.ID)
	if err != nil || paused.State != contract.SchedulePaused || paused.NextFire != nil {
		t.Fatalf("Pause = %+v, %v; want paused with no next fire", paused, err)
	}
	_, err = f.s.Pause(ctx, f.admin, "default", s.ID)
	wantCode(t, err, contract.CodeScheduleState)
	f.clock.Add(3 * time.Hour)
	if n := f.sweep(t); n != 0 {
		t.Fatalf("a paused schedule fired %d", n)
	}
	fire, err := f.s.RunNow(ctx, f.admin, "default", s.ID)
	if err != nil || fire.Kind != contract.FireRunNow || fire.Task == "" || fire.Outcome != contract.FirePosted {
		t.Fatalf("RunNow = %+v, %v; want a run_now fire with its task", fire, err)
	}
	resumed, err := f.s.Resume(ctx, f.admin, "default", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC); resumed.NextFire == nil || !resumed.NextFire.Equal(want) {
		t.Errorf("resumed next fire = %v; want the next hour from now, %s", resumed.NextFire, want)
	}
	if n := f.sweep(t); n != 0 {
		t.Errorf("a resumed schedule caught up %d fires it had while paused", n)
	}
	if got := f.events(t, event.ScheduleMissed); len(got) != 0 {
		t.Errorf("schedule.missed after a pause = %v; want none", got)
	}
	_, err = f.s.Resume(ctx, f.admin, "default", s.ID)
	wantCode(t, err, contract.CodeScheduleState)
	if _, err := f.s.Delete(ctx, f.admin, "default", s.ID); err != nil {
		t.Fatal(err)
	}
	list, err := f.s.Schedules(ctx, f.admin, "default")
	if err != nil || len(list) != 0 {
		t.Errorf("Schedules after delete = %+v, %v; want none", list, err)
	}
	_, err = f.s.Schedule(ctx, f.admin, "default", s.ID)
	wantCode(t, err, contract.CodeNotFound)
	f.clock.Add(2 * time.Hour)
	if n := f.sweep(t); n != 0 {
		t.Errorf("a deleted schedule fired %d", n)
	}
	for _, typ := range []string{event.SchedulePaused, event.ScheduleResumed, event.ScheduleDeleted} {
		if got := f.events(t, typ); len(got) != 1 || got[0]["schedule"] != string(s.ID) {
			t.Errorf("%s events = %v; want one naming %s", typ, got, s.ID)
		}
	}
}

// TestSchedules_PostingResent: a fire left posting by an authority that stopped after its
// task was posted (or before) is sent again by a later sweep, and the client key makes
// the second post find the first one's task: one task, never two.
func TestSchedules_PostingResent(t *testing.T) {
	for _, posted := range []bool{true, false} {
		name := map[bool]string{true: "the task was posted before the stop", false: "the stop came before the post"}[posted]
		t.Run(name, func(t *testing.T) {
			f := newSchedFixture(t)
			ctx := t.Context()
			s := f.create(t, contract.CreateScheduleRequest{Every: "1h"})
			due := f.clock.Now().Truncate(time.Second).Add(time.Hour)
			f.clock.Add(time.Hour + time.Second)
			// What the stopped authority left: the schedule moved on, its fire posting.
			rec, err := f.st.Schedule(ctx, string(s.ID))
			if err != nil {
				t.Fatal(err)
			}
			moved := rec
			moved.NextDue = due.Add(time.Hour)
			fire := store.ScheduleFire{Schedule: rec.ID, Due: due, Project: "default", Kind: contract.FireDue, FiredAt: f.clock.Now(), Outcome: contract.FirePosting}
			if err := f.st.Update(ctx, func(tx store.Tx) error {
				if err := tx.UpdateSchedule(ctx, moved, rec.NextDue); err != nil {
					return err
				}
				return tx.RecordFire(ctx, fire)
			}); err != nil {
				t.Fatal(err)
			}
			var first contract.Task
			if posted {
				if first, err = f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: rec.Agent, Text: "Tidy the workspace.",
					ClientKey: rec.ID + ":" + strconv.FormatInt(due.UnixNano(), 10)}); err != nil {
					t.Fatal(err)
				}
			}
			f.sweep(t) // within the repost bound: left alone
			if got := len(f.tasks(t)); got != map[bool]int{true: 1, false: 0}[posted] {
				t.Fatalf("tasks before the repost bound = %d", got)
			}
			f.clock.Add(time.Minute)
			f.sweep(t)
			ts := f.tasks(t)
			if len(ts) != 1 || (posted && ts[0].ID != first.ID) {
				t.Fatalf("tasks after the repost = %+v; want one (%s)", ts, first.ID)
			}
			shown, err := f.s.Schedule(ctx, f.admin, "default", s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := shown.LastFires[0]; got.Task != ts[0].ID || got.Outcome != contract.FirePosted {
				t.Errorf("fire = %+v; want posted with task %s", got, ts[0].ID)
			}
		})
	}
}

// TestSchedules_TwoInstances: two authorities over one database (two serves), their
// sweeps racing at the same due times, fire each due time once and post one task for it.
func TestSchedules_TwoInstances(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := &schedFixture{opsFixture: opsFixtureOver(t, s1, time.Millisecond)}
			var err error
			if f.s, err = authority.NewSchedules(f.a, authority.SchedulesConfig{}); err != nil {
				t.Fatal(err)
			}
			b := authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now})
			other, err := authority.NewSchedules(b, authority.SchedulesConfig{})
			if err != nil {
				t.Fatal(err)
			}
			s := f.create(t, contract.CreateScheduleRequest{Every: "1m"})
			const rounds = 5
			for range rounds {
				f.clock.Add(time.Minute)
				errs := make(chan error, 2)
				for _, k := range []*schedule.Keeper{f.s, other} {
					go func() {
						_, err := k.Sweep(t.Context())
						errs <- err
					}()
				}
				for range 2 {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
			}
			shown, err := f.s.Schedule(t.Context(), f.admin, "default", s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(shown.LastFires) != rounds {
				t.Errorf("fires = %d; want %d, one a due time", len(shown.LastFires), rounds)
			}
			if got := len(f.tasks(t)); got != rounds {
				t.Errorf("tasks = %d; want %d", got, rounds)
			}
			if got := len(f.events(t, event.ScheduleFired)); got != rounds {
				t.Errorf("schedule.fired events = %d; want %d", got, rounds)
			}
		})
	}
}
