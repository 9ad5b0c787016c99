package authority

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/authority/budget"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// SetBudget sets budget name of project for a member acting itself; see
// [budget.Keeper.Set].
func (a *Authority) SetBudget(ctx context.Context, c identity.Caller, project contract.ProjectID, name string, spec contract.BudgetSpec) (contract.Budget, error) {
	return a.budgets.Set(ctx, c, project, name, spec)
}

// RemoveBudget removes budget name of project for a member acting itself; see
// [budget.Keeper.Remove].
func (a *Authority) RemoveBudget(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Budget, error) {
	return a.budgets.Remove(ctx, c, project, name)
}

// Budgets lists project's budgets with their current windows' spend; agent keeps those
// that count its requests when not empty.
func (a *Authority) Budgets(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Budget, error) {
	return a.budgets.List(ctx, c, project, agent)
}

// Budget returns budget name of project.
func (a *Authority) Budget(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Budget, error) {
	return a.budgets.Budget(ctx, c, project, name)
}

// ReserveBudget is the calling Agent runtime's ask before a model request; see
// [budget.Keeper.Reserve]. A task another Agent asked for spends the asking Agents'
// budgets too, and a task under a schedule's fire (the fire's own task, or one asked for
// from it, at any depth) spends that schedule's budgets (docs/agents.md, "Budgets").
func (a *Authority) ReserveBudget(ctx context.Context, c identity.Caller, req contract.BudgetReserve) (contract.BudgetReservation, error) {
	if req.Task == "" || len(c.Projects) != 1 {
		return a.budgets.Reserve(ctx, c, req, "")
	}
	askers, root, err := a.tasks.Lineage(ctx, c.Projects[0], c.ID, req.Task)
	if err != nil {
		return contract.BudgetReservation{}, fmt.Errorf("reserve budget: %w", err)
	}
	schedule, err := a.fireSchedule(ctx, root)
	if err != nil {
		return contract.BudgetReservation{}, err
	}
	return a.budgets.Reserve(ctx, c, req, schedule, askers...)
}

// ChargeBudget charges what a model request of the calling Agent used; see
// [budget.Keeper.Charge].
func (a *Authority) ChargeBudget(ctx context.Context, c identity.Caller, ch contract.BudgetCharge) error {
	return a.budgets.Charge(ctx, c, ch)
}

// fireSchedule returns the schedule whose fire posted t: a fire's task carries its
// schedule and due time as its client key ("" for none, and for the zero Task).
func (a *Authority) fireSchedule(ctx context.Context, t contract.Task) (string, error) {
	sid, _, ok := strings.Cut(t.ClientKey, ":")
	if !ok || !strings.HasPrefix(sid, "sch_") {
		return "", nil
	}
	s, err := a.store.Schedule(ctx, sid)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reserve budget: read schedule %s: %w", sid, err)
	}
	if s.Agent != string(t.Agent) || s.Project != string(t.Project) {
		return "", nil // a key that only looks like a fire's
	}
	return s.ID, nil
}

// budgetRoom is the task keeper's view of a budget a task waits on.
func (a *Authority) budgetRoom(ctx context.Context, project contract.ProjectID, name string) (bool, error) {
	return a.budgets.Room(ctx, project, name)
}

// newBudgets returns the budget keeper over a's store and clock.
func newBudgets(a *Authority) *budget.Keeper {
	return budget.New(budget.Config{Store: a.store, Now: a.now, Rand: a.rand})
}
