package contract

import (
	"math"
	"regexp"
	"sync"
	"time"
)

// CodeBudgetExhausted: a budget the authority holds has no room for another model request;
// the request was not sent, and the task waits until a member raises or resets the budget
// or its window turns (docs/budgets.md).
const CodeBudgetExhausted Code = "budget_exhausted"

// What a budget counts over.
const (
	BudgetScopeProject  = "project"  // every Agent of the project
	BudgetScopeAgent    = "agent"    // one Agent
	BudgetScopeSchedule = "schedule" // the tasks one schedule's fires post
)

// The windows a budget is counted in.
const (
	BudgetWindowDay   = "day"   // from midnight to midnight in the budget's zone
	BudgetWindowMonth = "month" // from the first of the month in the budget's zone
	BudgetWindowTotal = "total" // from when it was set, never turning
)

// Budget bounds.
const (
	DefaultBudgetWarnPercent = 80              // the share of a limit at which a budget warns
	MaxBudgetUSD             = 1_000_000.0     // the largest money limit, in US dollars
	MaxBudgetTokens          = int64(1) << 50  // the largest token limit
	MaxBudgetEstimate        = int64(10) << 20 // the most tokens one request may hold
)

// budgetNameForm is a budget's name: like a client key, short.
var budgetNameForm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// CheckBudgetName checks a budget's name: 1 to 64 letters, digits, '_', '.' or '-',
// starting with a letter or digit.
func CheckBudgetName(name string) error {
	if !budgetNameForm().MatchString(name) {
		return Errorf(CodeInvalidArgument, "budget name %q is not 1 to 64 letters, digits, '_', '.' or '-' starting with a letter or digit; pick another", name)
	}
	return nil
}

// BudgetLimits is what a member sets of a budget.
type BudgetLimits struct {
	Scope    string `json:"scope"`              // one of the BudgetScope… values
	Agent    string `json:"agent,omitempty"`    // scope agent: the Agent, by id or name (kept as its id)
	Schedule string `json:"schedule,omitempty"` // scope schedule: the schedule's id
	Window   string `json:"window"`             // one of the BudgetWindow… values
	TimeZone string `json:"timeZone,omitempty"` // an IANA zone the day or month is counted in; "" is UTC
	// MaxTokens bounds input plus output tokens per window; 0: no token limit.
	MaxTokens int64 `json:"maxTokens,omitempty"`
	// MaxUSD bounds the cost per window in US dollars, at the one price table's prices; 0:
	// no money limit. A model the table does not price counts in tokens only.
	MaxUSD float64 `json:"maxUsd,omitempty"`
	// WarnPercent is the share of a limit at which the budget warns, 1 to 100; 0 is
	// DefaultBudgetWarnPercent.
	WarnPercent int `json:"warnPercent,omitempty"`
}

// BudgetSpec is a member's set of a budget: PUT /api/v1/projects/{project}/budgets/{budget}.
// Setting a budget again replaces its limits (a raise, or a lowering); Reset also
// forgets what the current window has spent.
type BudgetSpec struct {
	BudgetLimits
	Reset bool `json:"reset,omitempty"`
}

// Check refuses a spec the authority cannot keep, naming the fix.
func (s BudgetSpec) Check() error {
	switch s.Scope {
	case BudgetScopeProject:
		if s.Agent != "" || s.Schedule != "" {
			return Errorf(CodeInvalidArgument, "a project budget names no agent and no schedule; leave them out, or use scope agent or schedule")
		}
	case BudgetScopeAgent:
		if s.Agent == "" || s.Schedule != "" {
			return Errorf(CodeInvalidArgument, "an agent budget names its Agent (agent) and no schedule")
		}
	case BudgetScopeSchedule:
		if s.Schedule == "" || s.Agent != "" {
			return Errorf(CodeInvalidArgument, "a schedule budget names its schedule (schedule) and no agent")
		}
	default:
		return Errorf(CodeInvalidArgument, "a budget's scope is project, agent or schedule, not %q", s.Scope)
	}
	if s.Window != BudgetWindowDay && s.Window != BudgetWindowMonth && s.Window != BudgetWindowTotal {
		return Errorf(CodeInvalidArgument, "a budget's window is day, month or total, not %q", s.Window)
	}
	if s.TimeZone != "" {
		if _, err := time.LoadLocation(s.TimeZone); err != nil || len(s.TimeZone) > 64 || s.TimeZone == "Local" {
			return Errorf(CodeInvalidArgument, "time zone %q is not an IANA zone name; use one like Europe/Berlin or UTC", s.TimeZone)
		}
	}
	switch {
	case s.MaxTokens < 0 || s.MaxTokens > MaxBudgetTokens:
		return Errorf(CodeInvalidArgument, "maxTokens %d is out of range; give 1 to %d, or 0 for no token limit", s.MaxTokens, MaxBudgetTokens)
	case s.MaxUSD < 0 || s.MaxUSD > MaxBudgetUSD || math.IsNaN(s.MaxUSD) || math.IsInf(s.MaxUSD, 0):
		return Errorf(CodeInvalidArgument, "maxUsd %v is out of range; give up to %.0f US dollars, or 0 for no money limit", s.MaxUSD, MaxBudgetUSD)
	case s.MaxTokens == 0 && s.MaxUSD == 0:
		return Errorf(CodeInvalidArgument, "a budget limits tokens (maxTokens), money (maxUsd) or both; give at least one")
	case s.WarnPercent < 0 || s.WarnPercent > 100:
		return Errorf(CodeInvalidArgument, "warnPercent %d is out of range; give 1 to 100, or 0 for %d", s.WarnPercent, DefaultBudgetWarnPercent)
	}
	return nil
}

// Budget is a budget as the authority holds it, with what its current window spent.
type Budget struct {
	Project ProjectID `json:"project"`
	Name    string    `json:"name"`
	BudgetLimits
	AgentName string      `json:"agentName,omitempty"`
	SetBy     Principal   `json:"setBy"`
	SetAt     time.Time   `json:"setAt"`
	Version   int64       `json:"version"`
	Spend     BudgetSpend `json:"spend"`
}

// BudgetSpend is what a budget's current window spent and holds.
type BudgetSpend struct {
	// WindowStart and WindowEnd bound the current window; both absent for a total budget.
	WindowStart *time.Time `json:"windowStart,omitempty"`
	WindowEnd   *time.Time `json:"windowEnd,omitempty"`
	Tokens      int64      `json:"tokens"`
	USD         float64    `json:"usd"`
	// UnpricedTokens are the part of Tokens whose model the price table does not name:
	// counted in tokens, not in money.
	UnpricedTokens int64   `json:"unpricedTokens,omitempty"`
	HeldTokens     int64   `json:"heldTokens,omitempty"` // held for model requests in flight
	HeldUSD        float64 `json:"heldUsd,omitempty"`
	Warned         bool    `json:"warned,omitempty"`    // the window reached the warning share
	Exhausted      bool    `json:"exhausted,omitempty"` // a request was stopped in the window
}

// BudgetCrossing is a budget's window reaching its warning share or stopping a request:
// the payload of budget.warned and budget.exhausted.
type BudgetCrossing struct {
	Budget      string     `json:"budget"`
	WindowStart *time.Time `json:"windowStart,omitempty"`
	Kind        string     `json:"kind"` // "tokens" or "usd": the limit crossed
	Used        float64    `json:"used"` // in the kind's unit, held parts included
	Limit       float64    `json:"limit"`
	Agent       AgentID    `json:"agent,omitempty"` // the Agent whose request crossed it
	Task        TaskID     `json:"task,omitempty"`
}

// BudgetReserve is an Agent runtime's ask before one model request: POST
// /api/v1/budgets/reserve. Tokens is what the request may use at most (its input as
// estimated and its output bound); the authority holds that much of every budget the
// request counts against until the charge.
type BudgetReserve struct {
	Task         TaskID         `json:"task,omitempty"`
	Conversation ConversationID `json:"conversation,omitempty"`
	Provider     string         `json:"provider"`
	Model        string         `json:"model"`
	Tokens       int64          `json:"tokens"`
}

// BudgetReservation is the answer to [BudgetReserve]. Granted: send the request, then
// charge Hold. Refused: Budget names the budget without room, and the request is not sent.
type BudgetReservation struct {
	Granted  bool       `json:"granted"`
	Hold     string     `json:"hold,omitempty"`  // "" when no budget applies: nothing to charge
	Until    *time.Time `json:"until,omitempty"` // the hold lapses then if never charged
	Budgets  []string   `json:"budgets,omitempty"`
	Budget   string     `json:"budget,omitempty"`
	Teaching string     `json:"teaching,omitempty"`
	// Unpriced says the model has no price in the table: money limits do not count it.
	Unpriced bool `json:"unpriced,omitempty"`
}

// BudgetCharge is what a model request used, as its provider reported it: POST
// /api/v1/budgets/charge. A hold charged twice is charged once.
type BudgetCharge struct {
	Hold         string `json:"hold"`
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
}

// CheckBudgetCharge refuses a charge that names no hold or negative usage.
func CheckBudgetCharge(c BudgetCharge) error {
	if c.Hold == "" || len(c.Hold) > 64 || c.InputTokens < 0 || c.OutputTokens < 0 || c.InputTokens > MaxBudgetTokens || c.OutputTokens > MaxBudgetTokens {
		return Errorf(CodeInvalidArgument, "a charge names the hold its reservation returned and the request's non-negative input and output tokens")
	}
	return nil
}

// CheckBudgetReserve refuses a reservation without a provider and model, or whose token
// estimate is not 1 to MaxBudgetEstimate.
func CheckBudgetReserve(r BudgetReserve) error {
	switch {
	case r.Provider == "" || len(r.Provider) > 64 || len(r.Model) > 200:
		return Errorf(CodeInvalidArgument, "a reservation names the profile's provider and model")
	case r.Tokens < 1 || r.Tokens > MaxBudgetEstimate:
		return Errorf(CodeInvalidArgument, "a reservation holds 1 to %d tokens, the request's estimated input and its output bound; got %d", MaxBudgetEstimate, r.Tokens)
	}
	if r.Conversation != "" {
		if _, err := ParseConversationID(string(r.Conversation)); err != nil {
			return err
		}
	}
	return nil
}
