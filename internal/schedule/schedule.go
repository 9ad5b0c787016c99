// Package schedule is the pure core of schedules: a cron expression or an interval in an
// IANA time zone, the next fire after a time, and what a sweep makes of the fires due since
// the last one under a stated missed-fire policy; it reads no clock.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones on machines without a zoneinfo database

	"github.com/robfig/cron/v3"
)

// Bounds of a schedule.
const (
	MinEvery     = time.Second          // the shortest interval
	MaxEvery     = 366 * 24 * time.Hour // the longest interval
	MaxExprBytes = 200                  // the longest cron expression
	// MaxCounted is how many missed fires of a cron expression a sweep counts one by one;
	// past it the count is a lower bound (Missed.AtLeast). An interval's count is exact.
	MaxCounted = 10000
)

// Policy is what a sweep does with fires whose time passed while no sweep ran (the
// authority was down, or the schedule's sweep came later than the grace).
type Policy string

// The policies.
const (
	Skip    Policy = "skip"     // a missed fire is recorded as missed and not run
	RunOnce Policy = "run_once" // the missed fires are run once, together, when the sweep comes
)

// ParsePolicy reads a policy; "" is Skip.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", Skip:
		return Skip, nil
	case RunOnce:
		return RunOnce, nil
	}
	return "", &FieldError{Field: "missed", Value: s, Reason: "is not a missed-fire policy: use skip or run_once"}
}

// Spec is a schedule as a member states it: a cron expression or an interval, and a zone.
type Spec struct {
	Cron  string        // five fields (minute hour day-of-month month day-of-week) or @daily and the like
	Every time.Duration // or an interval, counted from Anchor
	Zone  string        // an IANA name such as Europe/Berlin; "" is UTC
	// Anchor is where an interval counts from (its creation, a whole second): the fires
	// are Anchor+Every, Anchor+2·Every, …. A cron expression ignores it.
	Anchor time.Time
}

// FieldError says which part of a schedule is wrong and why.
type FieldError struct {
	Field  string // "minute", "hour", "day of month", "month", "day of week", "expression", "every", "zone", "missed"
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("the %s %q %s", e.Field, e.Value, e.Reason)
}

// Schedule is a parsed [Spec]. Its zero value is not usable; [Parse] returns one.
type Schedule struct {
	spec Spec
	loc  *time.Location
	cron *cron.SpecSchedule // nil for an interval
}

// starBit is the cron library's mark of a field given as * (its SpecSchedule keeps it
// in the top bit).
const starBit = 1 << 63

// fields names the five fields of a cron expression, in order.
var fields = [...]string{"minute", "hour", "day of month", "month", "day of week"}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse checks spec and returns the schedule. A wrong part is a *[FieldError] naming it.
func Parse(spec Spec) (Schedule, error) {
	loc, err := zone(spec.Zone)
	if err != nil {
		return Schedule{}, err
	}
	spec.Cron = strings.TrimSpace(spec.Cron)
	switch {
	case spec.Cron != "" && spec.Every != 0:
		return Schedule{}, &FieldError{Field: "expression", Value: spec.Cron, Reason: "comes with an interval too: give a cron expression or an interval, not both"}
	case spec.Cron == "" && spec.Every == 0:
		return Schedule{}, &FieldError{Field: "expression", Reason: "is missing: give a cron expression or an interval"}
	case spec.Every != 0:
		if spec.Every < MinEvery || spec.Every > MaxEvery {
			return Schedule{}, &FieldError{Field: "every", Value: spec.Every.String(), Reason: fmt.Sprintf("is out of bounds: an interval is from %s to %s", MinEvery, MaxEvery)}
		}
		// Whole seconds from a whole-second anchor: every due time is a whole second, as a
		// cron expression's are.
		if spec.Every%time.Second != 0 || !spec.Anchor.Equal(spec.Anchor.Truncate(time.Second)) {
			return Schedule{}, &FieldError{Field: "every", Value: spec.Every.String(), Reason: "is not a whole number of seconds"}
		}
		if spec.Anchor.IsZero() {
			return Schedule{}, errors.New("schedule: an interval needs its anchor")
		}
		return Schedule{spec: spec, loc: loc}, nil
	}
	c, err := parseCron(spec.Cron)
	if err != nil {
		return Schedule{}, err
	}
	c.Location = loc
	s := Schedule{spec: spec, loc: loc, cron: c}
	if s.Next(time.Unix(0, 0)).IsZero() {
		return Schedule{}, &FieldError{Field: "expression", Value: spec.Cron, Reason: "never fires: no date matches its day of month and month"}
	}
	return s, nil
}

// zone loads an IANA zone; "" is UTC. "Local" is refused: the authority's own zone is no
// zone a member stated.
func zone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" || len(name) > 64 {
		return nil, &FieldError{Field: "zone", Value: name, Reason: "is not an IANA time zone name such as Europe/Berlin or UTC"}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &FieldError{Field: "zone", Value: name, Reason: "is not an IANA time zone name such as Europe/Berlin or UTC"}
	}
	return loc, nil
}

// parseCron parses a five-field expression or a descriptor, naming the field that is
// wrong: each field is tried alone among stars, so the library's own reading decides.
func parseCron(expr string) (*cron.SpecSchedule, error) {
	if len(expr) > MaxExprBytes {
		return nil, &FieldError{Field: "expression", Value: expr[:MaxExprBytes] + "…", Reason: fmt.Sprintf("is longer than %d bytes", MaxExprBytes)}
	}
	switch {
	case strings.HasPrefix(expr, "@every"):
		return nil, &FieldError{Field: "expression", Value: expr, Reason: "is an interval: give it as an interval (--every 1h), not in the cron expression"}
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return nil, &FieldError{Field: "expression", Value: expr, Reason: "names a zone: give the zone on its own (--tz Europe/Berlin)"}
	}
	if strings.HasPrefix(expr, "@") {
		sch, err := parser.Parse(expr)
		if err != nil {
			return nil, &FieldError{Field: "expression", Value: expr, Reason: "is not a known descriptor: use @yearly, @monthly, @weekly, @daily or @hourly"}
		}
		return specOf(sch, expr)
	}
	fs := strings.Fields(expr)
	if len(fs) != len(fields) {
		return nil, &FieldError{Field: "expression", Value: expr, Reason: fmt.Sprintf("has %d fields; a cron expression has five: minute hour day-of-month month day-of-week, as in \"0 9 * * mon-fri\"", len(fs))}
	}
	for i, f := range fs {
		alone := []string{"*", "*", "*", "*", "*"}
		alone[i] = f
		if _, err := parser.Parse(strings.Join(alone, " ")); err != nil {
			return nil, &FieldError{Field: fields[i], Value: f, Reason: "is not valid: " + reason(err)}
		}
	}
	sch, err := parser.Parse(strings.Join(fs, " "))
	if err != nil {
		return nil, &FieldError{Field: "expression", Value: expr, Reason: "is not valid: " + reason(err)}
	}
	return specOf(sch, expr)
}

func specOf(sch cron.Schedule, expr string) (*cron.SpecSchedule, error) {
	c, ok := sch.(*cron.SpecSchedule)
	if !ok {
		return nil, &FieldError{Field: "expression", Value: expr, Reason: "is not a calendar schedule"}
	}
	return c, nil
}

// reason is the library's own words, which name the value and its bounds.
func reason(err error) string { return err.Error() }

// Spec returns the schedule as stated.
func (s Schedule) Spec() Spec { return s.spec }

// Location returns the schedule's zone.
func (s Schedule) Location() *time.Location { return s.loc }

// Next returns the first fire strictly after t, or the zero time when there is none within
// the cron library's five-year horizon. A cron schedule's fires are wall-clock times in its
// zone: a time that a spring-forward skips does not fire that day, and a time that a
// fall-back repeats fires once, at its first occurrence, unless the hour is given as *
// (or */n), which fires in each hour of real time. An interval is a fixed duration,
// the same across a zone's changes.
func (s Schedule) Next(t time.Time) time.Time {
	if s.cron == nil {
		a := s.spec.Anchor
		if t.Before(a) {
			return a.Add(s.spec.Every)
		}
		k := t.Sub(a) / s.spec.Every
		return a.Add((k + 1) * s.spec.Every)
	}
	next := s.cron.Next(t)
	// Hour * (or */n) means each matching hour of real time, so only a stated hour is
	// guarded against its repetition.
	for !next.IsZero() && s.cron.Hour&starBit == 0 && repeated(next.In(s.loc)) {
		next = s.cron.Next(next)
	}
	return next
}

// repeated reports whether t's wall clock in its zone already happened shortly before,
// under the other offset of a fall-back: the second occurrence of a repeated hour.
func repeated(t time.Time) bool {
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		e := t.Add(-back)
		if wall(e) == wall(t) {
			return true
		}
	}
	return false
}

func wall(t time.Time) [6]int {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return [6]int{y, int(mo), d, h, mi, sec}
}
