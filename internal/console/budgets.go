package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// budgetBackend is the part of the authority the budget routes need.
type budgetBackend interface {
	SetBudget(ctx context.Context, c identity.Caller, project contract.ProjectID, name string, spec contract.BudgetSpec) (contract.Budget, error)
	RemoveBudget(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Budget, error)
	Budgets(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Budget, error)
	Budget(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Budget, error)
	ReserveBudget(ctx context.Context, c identity.Caller, req contract.BudgetReserve) (contract.BudgetReservation, error)
	ChargeBudget(ctx context.Context, c identity.Caller, ch contract.BudgetCharge) error
}

// handleSetBudget sets a budget of the project for a member acting itself; a delegate's
// call of it is a card (budget.set is a consent operation).
func (s *Server) handleSetBudget(w http.ResponseWriter, r *http.Request) error {
	spec, err := decodeJSON[contract.BudgetSpec](w, r, s.maxBody)
	if err != nil {
		return err
	}
	b, err := s.auth.SetBudget(r.Context(), caller(r), project(r), r.PathValue("budget"), spec)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, b)
}

// handleRemoveBudget removes a budget of the project for a member acting itself and
// answers it as it was; a delegate's call of it is a card (budget.remove is a consent
// operation).
func (s *Server) handleRemoveBudget(w http.ResponseWriter, r *http.Request) error {
	b, err := s.auth.RemoveBudget(r.Context(), caller(r), project(r), r.PathValue("budget"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, b)
}

// handleBudgets lists the project's budgets with their current windows' spend; ?agent=
// keeps those that count that Agent's requests.
func (s *Server) handleBudgets(w http.ResponseWriter, r *http.Request) error {
	bs, err := s.auth.Budgets(r.Context(), caller(r), project(r), r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	page, err := paginate(r, bs, func(b contract.Budget) string { return b.Name })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleBudget returns one budget of the project.
func (s *Server) handleBudget(w http.ResponseWriter, r *http.Request) error {
	b, err := s.auth.Budget(r.Context(), caller(r), project(r), r.PathValue("budget"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, b)
}

// handleReserveBudget is an Agent runtime's ask before a model request; a refusal is an
// answer (granted false, the budget and why), not an error: the runtime does not send
// the request and reports its task waiting.
func (s *Server) handleReserveBudget(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.BudgetReserve](w, r, s.maxBody)
	if err != nil {
		return err
	}
	res, err := s.auth.ReserveBudget(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// handleChargeBudget charges what an Agent runtime's model request used.
func (s *Server) handleChargeBudget(w http.ResponseWriter, r *http.Request) error {
	ch, err := decodeJSON[contract.BudgetCharge](w, r, s.maxBody)
	if err != nil {
		return err
	}
	if err := s.auth.ChargeBudget(r.Context(), caller(r), ch); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
