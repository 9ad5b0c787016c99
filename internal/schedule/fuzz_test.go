package schedule_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/schedule"
)

// FuzzParse feeds any expression and zone to Parse, starting from testdata/exprs.txt: it never panics, refuses with a
// *FieldError, and a schedule it accepts fires strictly later than asked, in order.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "exprs.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		expr, zone, _ := strings.Cut(line, "\t")
		f.Add(expr, zone)
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
