package authority

import (
	"time"

	"github.com/docketrun/docket/internal/authority/schedule"
)

// Schedules keeps members' schedules and fires them; see [schedule.Keeper], whose methods
// it has.
type Schedules = schedule.Keeper

// Defaults for [SchedulesConfig].
const (
	DefaultScheduleGrace = schedule.DefaultGrace
	DefaultSchedulePoll  = schedule.DefaultPoll
	// MaxSchedules is how many schedules one project keeps.
	MaxSchedules = schedule.MaxSchedules
)

// SchedulesConfig configures [NewSchedules]; zero values take the defaults.
type SchedulesConfig struct {
	Grace time.Duration // how late a fire may come and still be on time
	Poll  time.Duration // the longest the sweep sleeps
}

// NewSchedules returns the schedules of a: kept in a's store, on a's clock, each fire
// posting its task with [Authority.PostTask] as the member who made the schedule.
func NewSchedules(a *Authority, cfg SchedulesConfig) (*Schedules, error) {
	return schedule.New(schedule.Config{Store: a.store, Tasks: a, Reader: a, Members: a.Directory,
		Now: a.now, Rand: a.rand, Log: a.log, Grace: cfg.Grace, Poll: cfg.Poll})
}
