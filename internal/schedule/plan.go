package schedule

import "time"

// Plan is what one sweep at a time makes of a schedule: at most one fire, the fires it
// does not run, and the next due time.
type Plan struct {
	// Fire is the due time of the one fire to make now; zero when none is made.
	Fire time.Time
	// Late says Fire is a catch-up of fires whose time passed (run_once), not one on time.
	Late bool
	// Missed are the due fires not run: every due time up to the sweep but Fire.
	Missed Missed
	// Next is the first due time after the sweep.
	Next time.Time
}

// Missed counts the due times a sweep did not run.
type Missed struct {
	Count       int
	AtLeast     bool // Count reached MaxCounted: there were at least that many
	First, Last time.Time
}

// Plan returns what a sweep at now does with the schedule whose next due time is due,
// under policy. The latest due time is on time when now is within grace of it; then it
// fires whatever the policy. The due times before it were missed: under Skip they are
// only recorded, and under RunOnce too, since the fire on time runs the work once for
// them. When even the latest is older than grace, Skip runs nothing and RunOnce fires once,
// late, for the latest. A sweep fires a schedule at most once, so a schedule never fires
// twice for one sweep's worth of time.
func (s Schedule) Plan(due, now time.Time, policy Policy, grace time.Duration) Plan {
	if due.IsZero() || due.After(now) {
		return Plan{Next: due}
	}
	p := Plan{Next: s.Next(now)}
	all := s.count(due, now)
	latest := all.Last
	p.Missed = s.before(all, due)
	switch {
	case now.Sub(latest) <= grace:
		p.Fire = latest
	case policy == RunOnce:
		p.Fire, p.Late = latest, true
	default:
		p.Missed = all // the latest is missed too
	}
	return p
}

// before returns all less its latest due time.
func (s Schedule) before(all Missed, due time.Time) Missed {
	if all.Count <= 1 {
		return Missed{}
	}
	m := all
	m.Count--
	m.Last = s.prev(all.Last, due)
	return m
}

// count counts the due times in [due, now], due being one.
func (s Schedule) count(due, now time.Time) Missed {
	if s.cron == nil {
		n := int64(now.Sub(due)/s.spec.Every) + 1
		m := Missed{First: due, Last: due.Add(time.Duration(n-1) * s.spec.Every)}
		m.Count = int(n) // an interval's count is exact, however long the window
		return m
	}
	m := Missed{First: due, Last: due, Count: 1}
	for t := s.Next(due); !t.IsZero() && !t.After(now); t = s.Next(t) {
		if m.Count == MaxCounted {
			m.AtLeast = true
			// Past the bound the latest is found from now's side, not by counting.
			m.Last = s.latestBefore(now, t)
			return m
		}
		m.Count++
		m.Last = t
	}
	return m
}

// prev returns the due time before t, not before floor (a due time before t).
func (s Schedule) prev(t, floor time.Time) time.Time {
	if s.cron == nil {
		return t.Add(-s.spec.Every)
	}
	return s.latestBefore(t.Add(-time.Nanosecond), floor)
}

// latestBefore returns the latest due time at or before now, searching back from now in
// growing steps; from is a due time before now.
func (s Schedule) latestBefore(now, from time.Time) time.Time {
	for back := time.Minute; ; back *= 2 {
		start := now.Add(-back)
		if !start.After(from) {
			start = from
		}
		last := time.Time{}
		for u := s.Next(start.Add(-time.Nanosecond)); !u.IsZero() && !u.After(now); u = s.Next(u) {
			last = u
		}
		if !last.IsZero() || start.Equal(from) {
			if last.IsZero() {
				return from
			}
			return last
		}
	}
}
