package schedule_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/schedule"
)

// BenchmarkSchedule_Next is one next fire of a weekday cron expression in a zone.
func BenchmarkSchedule_Next(b *testing.B) {
	s, err := schedule.Parse(schedule.Spec{Cron: "0 9 * * mon-fri", Zone: "Europe/Berlin"})
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC) // a Friday: the next fire is Monday's
	for b.Loop() {
		s.Next(at)
	}
}

// BenchmarkSchedule_PlanMonthDown is the first sweep after a month down under an
// every-minute expression: the plan counts to MaxCounted and finds the latest due time
// from the sweep's side.
func BenchmarkSchedule_PlanMonthDown(b *testing.B) {
	s, err := schedule.Parse(schedule.Spec{Cron: "* * * * *"})
	if err != nil {
		b.Fatal(err)
	}
	due := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := due.AddDate(0, 1, 0)
	for b.Loop() {
		s.Plan(due, now, schedule.RunOnce, time.Minute)
	}
}
