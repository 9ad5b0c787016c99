package authority

import (
	"time"

	"github.com/docketrun/docket/internal/authority/schedule"
)

// SchedulesConfig configures [NewSchedules]; zero values take the defaults,
// [schedule.DefaultGrace] and [schedule.DefaultPoll].
type SchedulesConfig struct {
	Grace time.Duration // how late a fire may come and still be on time
	Poll  time.Duration // the longest the sweep sleeps
}

// NewSchedules returns the schedules of a: kept in a's store, on a's clock, each fire
// posting its task with [Authority.PostTask] as the member who made the schedule.
func NewSchedules(a *Authority, cfg SchedulesConfig) (*schedule.Keeper, error) {
	return schedule.New(schedule.Config{Store: a.store, Tasks: a, Reader: a, Members: a.dir,
		Now: a.now, Rand: a.rand, Log: a.log, Grace: cfg.Grace, Poll: cfg.Poll})
}
