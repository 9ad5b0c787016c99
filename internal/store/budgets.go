package store

import "time"

// Budget is a member's spending limit on model requests in a project: over the
// project's Agents, one Agent's, or one schedule's tasks (Scope and Target), per Window
// in TimeZone or in total, in tokens and in millionths of a US dollar. Its key is
// (Project, Name); [Tx.PutBudget] replaces it whole and the caller bumps Version.
type Budget struct {
	Project     string
	Name        string
	Scope       string // "project", "agent" or "schedule"
	Target      string // the agent's or the schedule's id; "" for "project"
	Window      string // "day", "month" or "total"
	TimeZone    string // an IANA zone the day or month is counted in
	MaxTokens   int64  // input plus output tokens; 0: no token limit
	MaxMicroUSD int64  // millionths of a US dollar; 0: no money limit
	WarnPercent int    // the share of a limit at which a warning is recorded, 1 to 100
	SetBy       string // the member principal who set it last
	SetAt       time.Time
	Version     int64 // 1 when made, one more at each set
}

// BudgetSpend is what was charged to a budget in one window, which starts at Window
// (the zero time for a budget counted in total). Warned and Exhausted say whether the
// warning and the stop of this window were recorded, so each is recorded once.
type BudgetSpend struct {
	Project        string
	Budget         string
	Window         time.Time
	Tokens         int64 // input plus output tokens charged
	MicroUSD       int64 // millionths of a US dollar charged, priced requests only
	UnpricedTokens int64 // the part of Tokens whose model the price table does not name
	Warned         bool
	Exhausted      bool
}

// BudgetHold is a part of a budget's window held for one model request between its
// reservation and its charge. A hold past Until is the runtime's that never charged it
// (it stopped); it no longer counts.
type BudgetHold struct {
	ID       string
	Project  string
	Budget   string
	Window   time.Time
	Tokens   int64
	MicroUSD int64
	Until    time.Time
}
