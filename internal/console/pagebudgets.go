package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// budgetView is one budget as an Agent's page and Needs you show it: what its current
// window spent against each limit, and whether it warned or stopped a request.
type budgetView struct {
	contract.Budget
	Counts string // whose requests it counts, in words
	Agent  string // the Agent whose page raises it; "" for a project's or a schedule's
}

// Key changes whenever what the row shows does, so the live page replaces it.
func (b budgetView) Key() string {
	return fmt.Sprintf("%s-%d-%d-%d-%t-%t", b.Name, b.Version, b.Spend.Tokens, int64(b.Spend.USD*1e6), b.Spend.Warned, b.Spend.Exhausted)
}

// TokenShare is the share of the token limit spent, in percent (0 without one).
func (b budgetView) TokenShare() int { return share(float64(b.Spend.Tokens), float64(b.MaxTokens)) }

// USDShare is the share of the money limit spent, in percent (0 without one).
func (b budgetView) USDShare() int { return share(b.Spend.USD, b.MaxUSD) }

// USD prints dollars to a hundredth of a cent.
func (budgetView) USD(v float64) string { return fmt.Sprintf("$%.4f", v) }

func share(used, limit float64) int {
	if limit <= 0 {
		return 0
	}
	return min(int(used*100/limit), 100)
}

func viewBudget(b contract.Budget) budgetView {
	v := budgetView{Budget: b, Counts: "the whole project"}
	switch b.Scope {
	case contract.BudgetScopeAgent:
		v.Counts, v.Agent = "agent "+b.AgentName, b.Agent
	case contract.BudgetScopeSchedule:
		v.Counts = "schedule " + b.Schedule
	}
	return v
}

// agentBudgets returns the budgets that count a's requests.
func (s *Server) agentBudgets(ctx context.Context, v visit, a contract.Agent) ([]budgetView, error) {
	bs, err := s.auth.Budgets(ctx, v.caller, v.project, string(a.ID))
	if err != nil {
		return nil, err
	}
	out := make([]budgetView, 0, len(bs))
	for _, b := range bs {
		out = append(out, viewBudget(b))
	}
	return out, nil
}

// needBudgets returns the project's budgets whose current window warned or stopped a
// request: what Needs you lists beside the Requests.
func (s *Server) needBudgets(ctx context.Context, v visit) ([]budgetView, error) {
	bs, err := s.auth.Budgets(ctx, v.caller, v.project, "")
	if err != nil {
		return nil, err
	}
	var out []budgetView
	for _, b := range bs {
		if b.Spend.Warned || b.Spend.Exhausted {
			out = append(out, viewBudget(b))
		}
	}
	return out, nil
}

// pageSetBudget raises, lowers or resets a budget from an Agent's page, for a member:
// the limits typed in replace the old ones; scope, window, zone and warning share stay.
func (s *Server) pageSetBudget(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx := r.Context()
	name := r.PathValue("budget")
	b, err := s.auth.Budget(ctx, v.caller, v.project, name)
	if err != nil {
		return err
	}
	spec := contract.BudgetSpec{BudgetLimits: b.BudgetLimits, Reset: r.PostFormValue("reset") == "1"}
	if spec.MaxTokens, err = formNumber(r, "max_tokens", strconv.ParseInt); err != nil {
		return err
	}
	if spec.MaxUSD, err = formNumber(r, "max_usd", func(s string, _, _ int) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
		return err
	}
	if _, err := s.auth.SetBudget(ctx, v.caller, v.project, name, spec); err != nil {
		return err
	}
	n := noticeBudgetSet
	if spec.Reset {
		n = noticeBudgetReset
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(r.PathValue("agent")), n)
}

// pageRemoveBudget removes a budget from an Agent's page, for a member: its requests no
// longer count against it, and a task that waited on it goes on (docs/budgets.md).
func (s *Server) pageRemoveBudget(w http.ResponseWriter, r *http.Request, v visit) error {
	if _, err := s.auth.RemoveBudget(r.Context(), v.caller, v.project, r.PathValue("budget")); err != nil {
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(r.PathValue("agent")), noticeBudgetRemoved)
}

// formNumber reads a limit of the budget form: empty is 0 (no limit).
func formNumber[T int64 | float64](r *http.Request, field string, parse func(string, int, int) (T, error)) (T, error) {
	s := strings.TrimSpace(r.PostFormValue(field))
	if s == "" {
		return 0, nil
	}
	n, err := parse(s, 10, 64)
	if err != nil {
		return 0, contract.Errorf(contract.CodeInvalidArgument, "%s %q is not a number; give a limit, or leave it empty for none", field, s)
	}
	return n, nil
}
