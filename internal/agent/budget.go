package agent

import (
	"fmt"
	"math"

	"github.com/docketrun/docket/internal/contract"
)

// Budget bounds one run. A zero field is no bound. Budgets stop a run, not just report it:
// [Meter.Record] is called after every model turn and its error ends the run.
type Budget struct {
	MaxTurns  int     `toml:"max_turns"`  // model turns; 0: unbounded
	MaxTokens int64   `toml:"max_tokens"` // input plus output tokens over all turns; 0: unbounded
	MaxUSD    float64 `toml:"max_usd"`    // US dollars at the model's [Price]; 0: unbounded
}

// Validate refuses negative or non-finite bounds.
func (b Budget) Validate() error {
	if b.MaxTurns < 0 || b.MaxTokens < 0 || b.MaxUSD < 0 || math.IsNaN(b.MaxUSD) || math.IsInf(b.MaxUSD, 0) {
		return contract.Errorf(contract.CodeModelConfig, "budgets must be zero (no bound) or positive; got turns %d, tokens %d, usd %v", b.MaxTurns, b.MaxTokens, b.MaxUSD)
	}
	return nil
}

// BudgetKind names one of a [Budget]'s bounds.
type BudgetKind string

// Budget kinds.
const (
	BudgetTurns  BudgetKind = "turns"
	BudgetTokens BudgetKind = "tokens"
	BudgetUSD    BudgetKind = "usd"
)

// BudgetScope says what a [Budget] bounds: one run, or a conversation over all its runs.
type BudgetScope string

// Budget scopes.
const (
	ScopeRun          BudgetScope = "run"
	ScopeConversation BudgetScope = "conversation"
)

// Spent is what a run, or a conversation over all its runs, has used so far.
type Spent struct {
	Turns        int     `json:"turns,omitempty"`
	InputTokens  int64   `json:"inputTokens,omitempty"`
	OutputTokens int64   `json:"outputTokens,omitempty"`
	USD          float64 `json:"usd,omitempty"` // 0 when the model has no price
}

// add counts one model turn's usage at price.
func (s *Spent) add(u Usage, price Price) {
	s.Turns++
	s.InputTokens += u.InputTokens
	s.OutputTokens += u.OutputTokens
	s.USD += cost(price, u)
}

// check returns a *[BudgetError] of scope once s reaches or passes one of b's bounds,
// checked turns first, then tokens, then dollars; nil otherwise.
func (b Budget) check(scope BudgetScope, s Spent) *BudgetError {
	switch {
	case b.MaxTurns > 0 && s.Turns >= b.MaxTurns:
		return &BudgetError{Scope: scope, Kind: BudgetTurns, Limit: float64(b.MaxTurns), Used: float64(s.Turns), Spent: s}
	case b.MaxTokens > 0 && s.InputTokens+s.OutputTokens >= b.MaxTokens:
		return &BudgetError{Scope: scope, Kind: BudgetTokens, Limit: float64(b.MaxTokens), Used: float64(s.InputTokens + s.OutputTokens), Spent: s}
	case b.MaxUSD > 0 && s.USD >= b.MaxUSD:
		return &BudgetError{Scope: scope, Kind: BudgetUSD, Limit: b.MaxUSD, Used: s.USD, Spent: s}
	}
	return nil
}

// BudgetError says a run or a conversation reached one of its bounds, which one, and the
// figures.
type BudgetError struct {
	Scope BudgetScope // "" is [ScopeRun]
	Kind  BudgetKind
	Limit float64 // the bound, in the kind's unit
	Used  float64 // what was used when the run stopped
	Spent Spent   // everything the run used
}

func (e *BudgetError) Error() string {
	var limit, used string
	switch e.Kind {
	case BudgetUSD:
		limit, used = formatUSD(e.Limit), formatUSD(e.Used)
	default:
		limit, used = fmt.Sprintf("%.0f", e.Limit), fmt.Sprintf("%.0f", e.Used)
	}
	scope := e.Scope
	if scope == "" {
		scope = ScopeRun
	}
	return fmt.Sprintf("%s: the %s's %s budget is spent: used %s of %s (%d turns, %d input + %d output tokens, %s); raise the budget or narrow the task",
		contract.CodeBudgetExceeded, scope, e.Kind, used, limit, e.Spent.Turns, e.Spent.InputTokens, e.Spent.OutputTokens, formatUSD(e.Spent.USD))
}

// Code is [contract.CodeBudgetExceeded].
func (e *BudgetError) Code() contract.Code { return contract.CodeBudgetExceeded }

// Meter adds up one run's turns, tokens and cost against its [Budget]. It is not safe for
// concurrent use; a run takes its turns one at a time.
type Meter struct {
	budget Budget
	price  Price
	spent  Spent
}

// NewMeter returns a Meter for a run of model under b, priced from prices. A USD bound on
// a model the table does not price is refused: a bound that cannot be measured does not bound.
func NewMeter(b Budget, model string, prices Prices) (*Meter, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	price, ok := prices.Lookup(model)
	if !ok && b.MaxUSD > 0 {
		return nil, contract.Errorf(contract.CodeModelConfig, "a USD budget is set but model %q has no price; add it to the price file as [prices.%q] or drop the USD budget", model, model)
	}
	return &Meter{budget: b, price: price}, nil
}

// Record adds one model turn's usage and returns a *[BudgetError] once a bound is reached
// or passed, checked turns first, then tokens, then dollars. After an error the run takes
// no further model turn: it stops with the error (the answer of the last turn is kept).
func (m *Meter) Record(u Usage) error {
	m.spent.add(u, m.price)
	if e := m.budget.check(ScopeRun, m.spent); e != nil {
		return e
	}
	return nil
}

// Spent returns what the run has used so far.
func (m *Meter) Spent() Spent { return m.spent }
