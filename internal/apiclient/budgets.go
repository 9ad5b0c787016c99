package apiclient

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// SetBudget sets budget name of project, as a member.
func (c *Client) SetBudget(ctx context.Context, project, name string, spec contract.BudgetSpec) (contract.Budget, error) {
	return doOne[contract.Budget](ctx, c, http.MethodPut, ProjectPath(project, "budgets", name), spec)
}

// Budgets lists project's budgets, every page; agent keeps those that count its
// requests when not empty.
func (c *Client) Budgets(ctx context.Context, project, agent string) ([]contract.Budget, error) {
	return All[contract.Budget](ctx, c, byAgent(ProjectPath(project, "budgets"), agent))
}

// Budget returns budget name of project.
func (c *Client) Budget(ctx context.Context, project, name string) (contract.Budget, error) {
	return doOne[contract.Budget](ctx, c, http.MethodGet, ProjectPath(project, "budgets", name), nil)
}

// ReserveBudget asks, as an Agent's runtime, for room for one model request.
func (c *Client) ReserveBudget(ctx context.Context, req contract.BudgetReserve) (contract.BudgetReservation, error) {
	return doOne[contract.BudgetReservation](ctx, c, http.MethodPost, "/api/v1/budgets/reserve", req)
}

// ChargeBudget charges, as an Agent's runtime, what a model request used.
func (c *Client) ChargeBudget(ctx context.Context, ch contract.BudgetCharge) error {
	return c.Do(ctx, http.MethodPost, "/api/v1/budgets/charge", ch, nil)
}
