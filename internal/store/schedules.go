package store

import (
	"encoding/json"
	"time"
)

// Schedule is a member's schedule of tasks for an Agent: Cron or Every, never
// both, in TimeZone; Missed is "skip" or "run_once". NextDue is the next due time the
// sweep fires; [Tx.UpdateSchedule] moves it only from the value its writer read.
type Schedule struct {
	ID        string
	Project   string
	Agent     string // an agent id of Project
	Cron      string
	Every     time.Duration
	TimeZone  string
	Missed    string
	Task      json.RawMessage // the task each fire posts, as JSON; the store does not read it
	CreatedBy string          // the member principal whose tasks the fires post
	CreatedAt time.Time
	PausedAt  *time.Time
	DeletedAt *time.Time
	NextDue   time.Time
}

// ScheduleFire is one fire of a schedule, keyed by (Schedule, Due): a fire recorded once
// is never recorded again, so it is never made twice.
type ScheduleFire struct {
	Schedule  string
	Due       time.Time
	Project   string
	Kind      string // "due", "catch_up" or "run_now"
	FiredAt   time.Time
	Task      string // the task it created; "" until posted
	Outcome   string // "posting", "posted", then how it ended
	ErrorCode string
	Teaching  string
}
