package contract

// Error codes of schedules.
const (
	CodeInvalidSchedule Code = "invalid_schedule" // a cron expression, interval, zone or policy that does not parse; the teaching names the field
	CodeScheduleState   Code = "schedule_state"   // pause of a paused schedule, resume of an active one
	CodeScheduleLimit   Code = "schedule_limit"   // the project has the most schedules it may keep
)
