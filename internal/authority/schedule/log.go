package schedule

// Attribute keys of the schedule sweep's log records.
const (
	logComponent = "component"
	logErr       = "err"
	logSchedule  = "schedule"
	logDue       = "due"
	logFired     = "fired"
)
