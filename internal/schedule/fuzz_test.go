package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/schedule"
)

// FuzzParse feeds any expression and zone to Parse: it never panics, refuses with a
// *FieldError, and a schedule it accepts fires strictly later than asked, in order.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ expr, zone string }{
		{"0 9 * * mon-fri", "Europe/Berlin"}, {"*/15 * * * *", ""}, {"30 2 * * *", "Europe/Berlin"},
		{"@daily", "America/New_York"}, {"0 0 29 2 *", "UTC"}, {"61 * * * *", ""}, {"@every 1h", ""},
		{"1-5/2 3,4 ? jan-mar sun", "Asia/Kolkata"}, {"0 0 30 2 *", ""}, {"CRON_TZ=UTC 0 0 * * *", ""},
		{"* * * * * *", ""}, {"5-1 * * * *", "Australia/Lord_Howe"},
	} {
		f.Add(seed.expr, seed.zone)
	}
	from := time.Date(2026, 10, 24, 22, 59, 59, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr, zone string) {
		s, err := schedule.Parse(schedule.Spec{Cron: expr, Zone: zone})
		if err != nil {
			if _, ok := errors.AsType[*schedule.FieldError](err); !ok {
				t.Fatalf("Parse(%q, %q) = %v; want a *FieldError", expr, zone, err)
			}
			return
		}
		at := from
		for range 3 {
			next := s.Next(at)
			if next.IsZero() {
				return
			}
			if !next.After(at) {
				t.Fatalf("Parse(%q, %q).Next(%s) = %s; want later", expr, zone, at, next)
			}
			at = next
		}
	})
}
