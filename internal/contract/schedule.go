package contract

import "time"

// ScheduleID identifies a schedule: "sch_" and 16 hex digits.
type ScheduleID string

// ParseScheduleID checks s against the schedule id form.
func ParseScheduleID(s string) (ScheduleID, error) {
	if err := checkMinted("sch_", s); err != nil {
		return "", err
	}
	return ScheduleID(s), nil
}

// MissedPolicy is what a schedule does with fires whose time passed while the authority
// could not fire them (docs/workbench.md, Schedules).
type MissedPolicy string

// The missed-fire policies.
const (
	MissedSkip    MissedPolicy = "skip"     // recorded as missed, not run
	MissedRunOnce MissedPolicy = "run_once" // run once, together, when the authority is back
)

// Schedule states.
const (
	ScheduleActive = "active"
	SchedulePaused = "paused"
)

// ScheduleFire kinds.
const (
	FireDue     = "due"      // on time
	FireCatchUp = "catch_up" // once, late, for fires missed while down (run_once)
	FireRunNow  = "run_now"  // a member's run-now
)

// ScheduleFire outcomes. A fire is "posting" from the moment it is recorded until its task
// is posted ("posted") or refused ("refused"). Its task is posted with a client key made of
// the schedule and the due time, so a post sent again after a restart finds the task the
// first one made: a fire never doubles. A posted fire's outcome becomes its task's final
// state (completed, failed, cancelled) once the task has one, or "unknown" when its schedule's
// member can no longer read it (revoked).
const (
	FirePosting = "posting"
	FirePosted  = "posted"
	FireRefused = "refused"
	FireUnknown = "unknown"
)

// CreateScheduleRequest asks for a schedule that posts Task at each fire: Cron or Every
// (a Go duration such as "1h" or "90s"), never both. Task.Agent names the Agent (name or
// id); Task.ClientKey is the schedule's own (each fire's is the schedule and its due
// time), so it stays empty.
type CreateScheduleRequest struct {
	Cron     string       `json:"cron,omitempty"`
	Every    string       `json:"every,omitempty"`
	TimeZone string       `json:"timeZone,omitempty"` // IANA name; "" is UTC
	Missed   MissedPolicy `json:"missed,omitempty"`   // "" is skip
	Task     TaskRequest  `json:"task"`
}

// Schedule is a member's schedule with where it stands. Task.Agent is the Agent's id.
type Schedule struct {
	ID        ScheduleID   `json:"id"`
	Project   ProjectID    `json:"project"`
	AgentName string       `json:"agentName"`
	Cron      string       `json:"cron,omitempty"`
	Every     string       `json:"every,omitempty"`
	TimeZone  string       `json:"timeZone"`
	Missed    MissedPolicy `json:"missed"`
	Task      TaskRequest  `json:"task"`
	CreatedBy Principal    `json:"createdBy"`
	CreatedAt time.Time    `json:"createdAt"`
	State     string       `json:"state"` // ScheduleActive or SchedulePaused
	PausedAt  *time.Time   `json:"pausedAt,omitempty"`
	// NextFire is the next due time; nil while paused.
	NextFire *time.Time `json:"nextFire,omitempty"`
	// LastFires are the latest fires, newest first (on show; a list leaves them out).
	LastFires []ScheduleFire `json:"lastFires,omitempty"`
}

// ScheduleFire is one fire of a schedule: its due time is its key, so a fire is never
// made twice.
type ScheduleFire struct {
	Schedule  ScheduleID `json:"schedule"`
	Agent     AgentID    `json:"agent"` // the Agent the task is for, so events tail --agent finds the fire
	Due       time.Time  `json:"due"`
	FiredAt   time.Time  `json:"firedAt"`
	Kind      string     `json:"kind"`           // FireDue, FireCatchUp or FireRunNow
	Task      TaskID     `json:"task,omitempty"` // the task it created
	Outcome   string     `json:"outcome"`        // a Fire outcome, then the task's final state
	ErrorCode Code       `json:"errorCode,omitempty"`
	Teaching  string     `json:"teaching,omitempty"`
}
