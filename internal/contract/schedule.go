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

// ScheduleFire outcomes. A fire is "posting" from the moment it is claimed until its task
// is posted ("posted") or refused ("refused"); a fire whose authority stopped in between
// is "interrupted" and never posted again, so a fire never doubles. A posted fire's
// outcome becomes its task's once the task settles.
const (
	FirePosting     = "posting"
	FirePosted      = "posted"
	FireRefused     = "refused"
	FireInterrupted = "interrupted"
)

// CreateScheduleRequest asks for a schedule that creates a task for an Agent at each fire:
// Cron or Every (a Go duration such as "1h" or "90s"), never both.
type CreateScheduleRequest struct {
	Agent        string       `json:"agent"` // the Agent's name or id
	Cron         string       `json:"cron,omitempty"`
	Every        string       `json:"every,omitempty"`
	TimeZone     string       `json:"timeZone,omitempty"` // IANA name; "" is UTC
	Missed       MissedPolicy `json:"missed,omitempty"`   // "" is skip
	Text         string       `json:"text"`               // the task's text
	Conversation string       `json:"conversation,omitempty"`
	CaseType     string       `json:"caseType,omitempty"`
	BusinessKey  string       `json:"businessKey,omitempty"`
}

// Schedule is a member's schedule with where it stands.
type Schedule struct {
	ID           ScheduleID   `json:"id"`
	Project      ProjectID    `json:"project"`
	Agent        AgentID      `json:"agent"`
	AgentName    string       `json:"agentName"`
	Cron         string       `json:"cron,omitempty"`
	Every        string       `json:"every,omitempty"`
	TimeZone     string       `json:"timeZone"`
	Missed       MissedPolicy `json:"missed"`
	Text         string       `json:"text"`
	Conversation string       `json:"conversation,omitempty"`
	CaseType     string       `json:"caseType,omitempty"`
	BusinessKey  string       `json:"businessKey,omitempty"`
	CreatedBy    Principal    `json:"createdBy"`
	CreatedAt    time.Time    `json:"createdAt"`
	State        string       `json:"state"` // ScheduleActive or SchedulePaused
	PausedAt     *time.Time   `json:"pausedAt,omitempty"`
	// NextFire is the next due time; nil while paused.
	NextFire *time.Time `json:"nextFire,omitempty"`
	// LastFires are the latest fires, newest first (on show; a list leaves them out).
	LastFires []ScheduleFire `json:"lastFires,omitempty"`
}

// ScheduleFire is one fire of a schedule: its due time is its key, so a fire is never
// made twice.
type ScheduleFire struct {
	Schedule  ScheduleID `json:"schedule"`
	Due       time.Time  `json:"due"`
	FiredAt   time.Time  `json:"firedAt"`
	Kind      string     `json:"kind"`           // FireDue, FireCatchUp or FireRunNow
	Task      string     `json:"task,omitempty"` // the task it created
	Outcome   string     `json:"outcome"`
	ErrorCode Code       `json:"errorCode,omitempty"` // why the task was refused
	Teaching  string     `json:"teaching,omitempty"`
}
