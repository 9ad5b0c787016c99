package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/schedule"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustParse(t *testing.T, spec schedule.Spec) schedule.Schedule {
	t.Helper()
	s, err := schedule.Parse(spec)
	if err != nil {
		t.Fatalf("Parse(%+v): %v", spec, err)
	}
	return s
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParse_Refusals(t *testing.T) {
	t.Parallel()
	anchor := utc("2026-01-01T00:00:00Z")
	tests := []struct {
		name      string
		spec      schedule.Spec
		wantField string
	}{
		{"a minute out of range", schedule.Spec{Cron: "61 * * * *"}, "minute"},
		{"an hour out of range", schedule.Spec{Cron: "0 24 * * *"}, "hour"},
		{"a day of month of zero", schedule.Spec{Cron: "0 9 0 * *"}, "day of month"},
		{"an unknown month name", schedule.Spec{Cron: "0 9 1 foo *"}, "month"},
		{"a day of week out of range", schedule.Spec{Cron: "0 9 * * 8"}, "day of week"},
		{"a bad step", schedule.Spec{Cron: "*/0 * * * *"}, "minute"},
		{"four fields", schedule.Spec{Cron: "0 9 * *"}, "expression"},
		{"six fields", schedule.Spec{Cron: "0 0 9 * * *"}, "expression"},
		{"an unknown descriptor", schedule.Spec{Cron: "@fortnightly"}, "expression"},
		{"@every in the expression", schedule.Spec{Cron: "@every 1h"}, "expression"},
		{"a zone in the expression", schedule.Spec{Cron: "CRON_TZ=Europe/Berlin 0 9 * * *"}, "expression"},
		{"a date that never comes", schedule.Spec{Cron: "0 0 30 2 *"}, "expression"},
		{"neither cron nor interval", schedule.Spec{}, "expression"},
		{"both cron and interval", schedule.Spec{Cron: "@daily", Every: time.Hour, Anchor: anchor}, "expression"},
		{"an interval under a second", schedule.Spec{Every: time.Millisecond, Anchor: anchor}, "every"},
		{"an interval over a year", schedule.Spec{Every: 400 * 24 * time.Hour, Anchor: anchor}, "every"},
		{"an interval of part of a second", schedule.Spec{Every: 1500 * time.Millisecond, Anchor: anchor}, "every"},
		{"an unknown zone", schedule.Spec{Cron: "@daily", Zone: "Mars/Olympus"}, "zone"},
		{"the local zone", schedule.Spec{Cron: "@daily", Zone: "Local"}, "zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schedule.Parse(tt.spec)
			fe, ok := errors.AsType[*schedule.FieldError](err)
			if !ok {
				t.Fatalf("Parse(%+v) = %v; want a *FieldError", tt.spec, err)
			}
			if fe.Field != tt.wantField {
				t.Errorf("Parse(%+v) names the %s (%v); want the %s", tt.spec, fe.Field, fe, tt.wantField)
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]schedule.Policy{"": schedule.Skip, "skip": schedule.Skip, "run_once": schedule.RunOnce} {
		got, err := schedule.ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := schedule.ParsePolicy("catch_up"); err == nil {
		t.Error("ParsePolicy(catch_up) = nil error; want a refusal")
	}
}

// TestSchedule_Next walks fires one after another, across the daylight-saving changes of
// Europe/Berlin in 2026 (29 March 02:00 → 03:00, 25 October 03:00 → 02:00).
func TestSchedule_Next(t *testing.T) {
	t.Parallel()
	berlin := mustZone(t, "Europe/Berlin")
	anchor := utc("2026-10-24T23:30:00Z")
	tests := []struct {
		name  string
		spec  schedule.Spec
		after time.Time
		want  []time.Time
	}{
		{"daily at nine in Berlin, winter then summer time",
			schedule.Spec{Cron: "0 9 * * *", Zone: "Europe/Berlin"}, utc("2026-03-28T00:00:00Z"),
			[]time.Time{utc("2026-03-28T08:00:00Z"), utc("2026-03-29T07:00:00Z"), utc("2026-03-30T07:00:00Z")}},
		{"02:30 does not exist on the spring-forward day",
			schedule.Spec{Cron: "30 2 * * *", Zone: "Europe/Berlin"}, utc("2026-03-27T12:00:00Z"),
			[]time.Time{utc("2026-03-28T01:30:00Z"), utc("2026-03-30T00:30:00Z")}},
		{"02:30 repeated on the fall-back day fires once",
			schedule.Spec{Cron: "30 2 * * *", Zone: "Europe/Berlin"}, utc("2026-10-24T12:00:00Z"),
			[]time.Time{utc("2026-10-25T00:30:00Z"), utc("2026-10-26T01:30:00Z")}},
		{"an hourly expression fires in each real hour of the fall-back",
			schedule.Spec{Cron: "0 * * * *", Zone: "Europe/Berlin"}, utc("2026-10-24T23:30:00Z"),
			[]time.Time{utc("2026-10-25T00:00:00Z"), utc("2026-10-25T01:00:00Z"), utc("2026-10-25T02:00:00Z")}},
		{"weekdays at nine skip the weekend",
			schedule.Spec{Cron: "0 9 * * mon-fri"}, utc("2026-12-04T10:00:00Z"), // a Friday
			[]time.Time{utc("2026-12-07T09:00:00Z"), utc("2026-12-08T09:00:00Z")}},
		{"a descriptor in a zone",
			schedule.Spec{Cron: "@daily", Zone: "America/New_York"}, utc("2026-12-01T12:00:00Z"),
			[]time.Time{utc("2026-12-02T05:00:00Z"), utc("2026-12-03T05:00:00Z")}},
		{"an interval is real time across the fall-back",
			schedule.Spec{Every: time.Hour, Zone: "Europe/Berlin", Anchor: anchor}, anchor,
			[]time.Time{utc("2026-10-25T00:30:00Z"), utc("2026-10-25T01:30:00Z"), utc("2026-10-25T02:30:00Z")}},
		{"an interval from before its anchor",
			schedule.Spec{Every: 90 * time.Minute, Anchor: anchor}, anchor.Add(-time.Hour),
			[]time.Time{anchor.Add(90 * time.Minute), anchor.Add(180 * time.Minute)}},
		{"an interval from between two fires",
			schedule.Spec{Every: time.Second, Anchor: anchor}, anchor.Add(2500 * time.Millisecond),
			[]time.Time{anchor.Add(3 * time.Second), anchor.Add(4 * time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.spec)
			var got []time.Time
			at := tt.after
			for range tt.want {
				at = s.Next(at)
				got = append(got, at.UTC())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fires after %s (-want +got):\n%s", tt.after, diff)
			}
			for _, f := range got {
				if f.In(berlin).IsZero() {
					t.Errorf("zero fire")
				}
			}
		})
	}
}

// TestSchedule_Plan is a sweep at a fake time after a window in which no sweep ran.
func TestSchedule_Plan(t *testing.T) {
	t.Parallel()
	a := utc("2026-01-01T00:00:00Z")
	hourly := schedule.Spec{Every: time.Hour, Anchor: a}
	nine := schedule.Spec{Cron: "0 9 * * *", Zone: "Europe/Berlin"}
	everyMinute := schedule.Spec{Cron: "* * * * *"}
	const grace = time.Minute
	tests := []struct {
		name   string
		spec   schedule.Spec
		due    time.Time
		now    time.Time
		policy schedule.Policy
		want   schedule.Plan
	}{
		{"not due yet", hourly, a.Add(time.Hour), a.Add(30 * time.Minute), schedule.Skip,
			schedule.Plan{Next: a.Add(time.Hour)}},
		{"due now, on time", hourly, a.Add(time.Hour), a.Add(time.Hour + 5*time.Second), schedule.Skip,
			schedule.Plan{Fire: a.Add(time.Hour), Next: a.Add(2 * time.Hour)}},
		{"down three hours, back just after a fire's time: skip fires that one", hourly, a.Add(time.Hour), a.Add(4*time.Hour + 10*time.Second), schedule.Skip,
			schedule.Plan{Fire: a.Add(4 * time.Hour), Next: a.Add(5 * time.Hour),
				Missed: schedule.Missed{Count: 3, First: a.Add(time.Hour), Last: a.Add(3 * time.Hour)}}},
		{"down three hours, back just after a fire's time: run_once the same", hourly, a.Add(time.Hour), a.Add(4*time.Hour + 10*time.Second), schedule.RunOnce,
			schedule.Plan{Fire: a.Add(4 * time.Hour), Next: a.Add(5 * time.Hour),
				Missed: schedule.Missed{Count: 3, First: a.Add(time.Hour), Last: a.Add(3 * time.Hour)}}},
		{"down past a fire's grace: skip runs nothing", hourly, a.Add(time.Hour), a.Add(4*time.Hour + 30*time.Minute), schedule.Skip,
			schedule.Plan{Next: a.Add(5 * time.Hour),
				Missed: schedule.Missed{Count: 4, First: a.Add(time.Hour), Last: a.Add(4 * time.Hour)}}},
		{"down past a fire's grace: run_once fires once, late", hourly, a.Add(time.Hour), a.Add(4*time.Hour + 30*time.Minute), schedule.RunOnce,
			schedule.Plan{Fire: a.Add(4 * time.Hour), Late: true, Next: a.Add(5 * time.Hour),
				Missed: schedule.Missed{Count: 3, First: a.Add(time.Hour), Last: a.Add(3 * time.Hour)}}},
		{"one fire late: run_once fires it late, nothing else missed", hourly, a.Add(time.Hour), a.Add(time.Hour + 10*time.Minute), schedule.RunOnce,
			schedule.Plan{Fire: a.Add(time.Hour), Late: true, Next: a.Add(2 * time.Hour)}},
		{"one fire late: skip misses it", hourly, a.Add(time.Hour), a.Add(time.Hour + 10*time.Minute), schedule.Skip,
			schedule.Plan{Next: a.Add(2 * time.Hour), Missed: schedule.Missed{Count: 1, First: a.Add(time.Hour), Last: a.Add(time.Hour)}}},
		{"a weekend down in Berlin, back on Monday at 09:30: run_once", nine,
			utc("2026-12-04T08:00:00Z"), utc("2026-12-07T08:30:00Z"), schedule.RunOnce,
			schedule.Plan{Fire: utc("2026-12-07T08:00:00Z"), Late: true, Next: utc("2026-12-08T08:00:00Z"),
				Missed: schedule.Missed{Count: 3, First: utc("2026-12-04T08:00:00Z"), Last: utc("2026-12-06T08:00:00Z")}}},
		{"the same weekend: skip", nine,
			utc("2026-12-04T08:00:00Z"), utc("2026-12-07T08:30:00Z"), schedule.Skip,
			schedule.Plan{Next: utc("2026-12-08T08:00:00Z"),
				Missed: schedule.Missed{Count: 4, First: utc("2026-12-04T08:00:00Z"), Last: utc("2026-12-07T08:00:00Z")}}},
		{"a month down under an every-minute expression counts to the bound", everyMinute,
			utc("2026-11-01T00:00:00Z"), utc("2026-12-01T00:00:30Z"), schedule.Skip,
			schedule.Plan{Fire: utc("2026-12-01T00:00:00Z"), Next: utc("2026-12-01T00:01:00Z"),
				Missed: schedule.Missed{Count: schedule.MaxCounted - 1, AtLeast: true, First: utc("2026-11-01T00:00:00Z"), Last: utc("2026-11-30T23:59:00Z")}}},
		{"a year down under an hourly interval counts exactly", hourly,
			a.Add(time.Hour), a.Add(365*24*time.Hour + time.Second), schedule.Skip,
			schedule.Plan{Fire: a.Add(365 * 24 * time.Hour), Next: a.Add(365*24*time.Hour + time.Hour),
				Missed: schedule.Missed{Count: 365*24 - 1, First: a.Add(time.Hour), Last: a.Add(365*24*time.Hour - time.Hour)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustParse(t, tt.spec).Plan(tt.due, tt.now, tt.policy, grace)
			if diff := cmp.Diff(tt.want, utcPlan(got)); diff != "" {
				t.Errorf("Plan(due %s, now %s, %s) (-want +got):\n%s", tt.due, tt.now, tt.policy, diff)
			}
		})
	}
}

func utcPlan(p schedule.Plan) schedule.Plan {
	u := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.UTC()
	}
	p.Fire, p.Next, p.Missed.First, p.Missed.Last = u(p.Fire), u(p.Next), u(p.Missed.First), u(p.Missed.Last)
	return p
}
