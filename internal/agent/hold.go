package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Holder is the authority's budgets (docs/budgets.md) as the loop asks them: before each
// model request it reserves room for what the request may use, and after the answer it
// charges what the provider reported. A request the authority refuses is not sent.
type Holder interface {
	// Reserve asks for room for one model request of conversation that may use up to
	// tokens. An error is the ask's own (the authority unreachable): the request is not
	// sent either.
	Reserve(ctx context.Context, conversation string, tokens int64) (Grant, error)
	// Charge charges what the request held by hold used.
	Charge(ctx context.Context, hold string, u Usage) error
}

// Grant is the authority's answer to a reservation.
type Grant struct {
	Granted  bool
	Hold     string // "" when no budget counts the request: nothing to charge
	Budget   string // refused: the budget without room
	Teaching string // refused: why, and what a member does
}

// BudgetExhaustedError says a budget the authority holds had no room for the next model
// request, which was not sent: the conversation is kept, and its task waits on Budget
// until a member raises or resets it, or its window turns. Its code is
// [contract.CodeBudgetExhausted].
type BudgetExhaustedError struct {
	Budget string
	Err    *contract.Error
}

func (e *BudgetExhaustedError) Error() string { return e.Err.Error() }
func (e *BudgetExhaustedError) Unwrap() error { return e.Err }

// defaultAnswerTokens is what a request's answer is counted as when the loop sets no
// MaxTokens: the largest default of the providers (anthropic's).
const defaultAnswerTokens = 8192

// reserve asks the loop's Holder, if any, for room for a request whose body is sent
// bytes long: its input estimated at a token per four bytes, and its answer bound. The
// returned hold is "" when there is nothing to charge.
func (l *Loop) reserve(ctx context.Context, conversation string, sent int) (string, error) {
	if l.cfg.Budgets == nil {
		return "", nil
	}
	answer := int64(l.cfg.MaxTokens)
	if answer <= 0 {
		answer = defaultAnswerTokens
	}
	tokens := min(int64(sent)/4+answer, contract.MaxBudgetEstimate)
	g, err := l.cfg.Budgets.Reserve(ctx, conversation, tokens)
	if err != nil {
		return "", fmt.Errorf("reserve budget for the model request of conversation %s: %w", conversation, err)
	}
	if !g.Granted {
		return "", &BudgetExhaustedError{Budget: g.Budget, Err: &contract.Error{Code: contract.CodeBudgetExhausted, Teaching: g.Teaching}}
	}
	return g.Hold, nil
}

// charge charges what the request held by hold used: the answer's usage, or the usage a
// failed request reported (turnErr). A charge that fails is logged: the answer is kept,
// and the hold lapses at its end, so the budget counts less than was used.
func (l *Loop) charge(ctx context.Context, conversation, hold string, u Usage, turnErr error) {
	if hold == "" {
		return
	}
	if pe, ok := errors.AsType[*ProviderError](turnErr); ok {
		u = pe.Usage
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := l.cfg.Budgets.Charge(ctx, hold, u); err != nil {
		l.log.Warn("model request not charged to its budgets", logConversation, conversation, logErr, err)
	}
}
