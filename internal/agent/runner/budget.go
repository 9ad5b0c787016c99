package runner

import (
	"context"
	"slices"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// authorityBudgets is the authority's budgets as the loop asks them (agent.Holder), for
// the runtime's model: each request is reserved before it is sent and charged after.
type authorityBudgets struct {
	api             *apiclient.Client
	provider, model string
}

var _ agent.Holder = authorityBudgets{}

// taskKey carries the task a run serves, so that its reservations name it: a task a
// schedule's fire posted counts against that schedule's budgets too.
type taskKey struct{}

func withTask(ctx context.Context, id contract.TaskID) context.Context {
	return context.WithValue(ctx, taskKey{}, id)
}

func (b authorityBudgets) Reserve(ctx context.Context, conversation string, tokens int64) (agent.Grant, error) {
	task, _ := ctx.Value(taskKey{}).(contract.TaskID)
	r, err := b.api.ReserveBudget(ctx, contract.BudgetReserve{Task: task, Conversation: contract.ConversationID(conversation),
		Provider: b.provider, Model: b.model, Tokens: tokens})
	if err != nil {
		return agent.Grant{}, err
	}
	return agent.Grant{Granted: r.Granted, Hold: r.Hold, Budget: r.Budget, Teaching: r.Teaching}, nil
}

func (b authorityBudgets) Charge(ctx context.Context, hold string, u agent.Usage) error {
	return b.api.ChargeBudget(ctx, contract.BudgetCharge{Hold: hold, Provider: b.provider, Model: b.model,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens})
}

// budgetOnly reports whether every wait of ws is on a budget: such a wake resumes the
// conversation where the budget stopped it, with no outcome to read.
func budgetOnly(ws []contract.TaskWait) bool {
	return len(ws) > 0 && !slices.ContainsFunc(ws, func(w contract.TaskWait) bool { return w.Budget == "" })
}
