package apiclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// SetBudget sets budget name of project, as a member.
func (c *Client) SetBudget(ctx context.Context, project, name string, spec contract.BudgetSpec) (contract.Budget, error) {
	var b contract.Budget
	err := c.Do(ctx, http.MethodPut, ProjectPath(project, "budgets", name), spec, &b)
	return b, err
}

// Budgets lists project's budgets, every page; agent keeps those that count its
// requests when not empty.
func (c *Client) Budgets(ctx context.Context, project, agent string) ([]contract.Budget, error) {
	path := ProjectPath(project, "budgets")
	if agent != "" {
		path += "?" + url.Values{"agent": {agent}}.Encode()
	}
	return All[contract.Budget](ctx, c, path)
}

// Budget returns budget name of project.
func (c *Client) Budget(ctx context.Context, project, name string) (contract.Budget, error) {
	var b contract.Budget
	err := c.Do(ctx, http.MethodGet, ProjectPath(project, "budgets", name), nil, &b)
	return b, err
}

// ReserveBudget asks, as an Agent's runtime, for room for one model request.
func (c *Client) ReserveBudget(ctx context.Context, req contract.BudgetReserve) (contract.BudgetReservation, error) {
	var r contract.BudgetReservation
	err := c.Do(ctx, http.MethodPost, "/api/v1/budgets/reserve", req, &r)
	return r, err
}

// ChargeBudget charges, as an Agent's runtime, what a model request used.
func (c *Client) ChargeBudget(ctx context.Context, ch contract.BudgetCharge) error {
	return c.Do(ctx, http.MethodPost, "/api/v1/budgets/charge", ch, nil)
}
