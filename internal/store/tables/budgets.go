package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/store"
)

const budgetColumns = `SELECT project, name, scope, target, window_kind, time_zone, max_tokens, max_micro_usd,
	warn_percent, set_by, set_at, version FROM budgets`

func scanBudget(r Row) (store.Budget, error) {
	var b store.Budget
	var setAt, warn int64
	if err := r.Scan(&b.Project, &b.Name, &b.Scope, &b.Target, &b.Window, &b.TimeZone, &b.MaxTokens, &b.MaxMicroUSD,
		&warn, &b.SetBy, &setAt, &b.Version); err != nil {
		return store.Budget{}, err
	}
	b.WarnPercent, b.SetAt = int(warn), fromNanos(setAt)
	return b, nil
}

const spendColumns = `SELECT project, budget, window_start, tokens, micro_usd, unpriced_tokens, warned, exhausted FROM budget_spend`

func scanSpend(r Row) (store.BudgetSpend, error) {
	var s store.BudgetSpend
	var window, warned, exhausted int64
	if err := r.Scan(&s.Project, &s.Budget, &window, &s.Tokens, &s.MicroUSD, &s.UnpricedTokens, &warned, &exhausted); err != nil {
		return store.BudgetSpend{}, err
	}
	s.Window, s.Warned, s.Exhausted = windowTime(window), warned == 1, exhausted == 1
	return s, nil
}

const holdColumns = `SELECT id, project, budget, window_start, tokens, micro_usd, until_at FROM budget_holds`

func scanHold(r Row) (store.BudgetHold, error) {
	var h store.BudgetHold
	var window, until int64
	if err := r.Scan(&h.ID, &h.Project, &h.Budget, &window, &h.Tokens, &h.MicroUSD, &until); err != nil {
		return store.BudgetHold{}, err
	}
	h.Window, h.Until = windowTime(window), fromNanos(until)
	return h, nil
}

// windowNanos keeps the zero time (a budget counted in total) as 0, which reads back as
// the zero time, not 1970.
func windowNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func windowTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return fromNanos(n)
}

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Budgets implements [store.Reader.Budgets].
func (r Reader) Budgets(ctx context.Context, project string) ([]store.Budget, error) {
	bs, err := list(ctx, r.C, scanBudget, budgetColumns+` WHERE project = $1 ORDER BY name`, project)
	if err != nil {
		return nil, fmt.Errorf("list budgets of %s: %w", project, err)
	}
	return bs, nil
}

// BudgetSpend implements [store.Reader.BudgetSpend].
func (r Reader) BudgetSpend(ctx context.Context, project, budget string, window time.Time) (store.BudgetSpend, error) {
	s, err := scanSpend(r.C.QueryRow(ctx, spendColumns+` WHERE project = $1 AND budget = $2 AND window_start = $3`, project, budget, windowNanos(window)))
	if err != nil {
		return store.BudgetSpend{}, fmt.Errorf("read the spend of budget %s: %w", budget, err)
	}
	return s, nil
}

// BudgetHolds implements [store.Reader.BudgetHolds].
func (r Reader) BudgetHolds(ctx context.Context, project, budget string) ([]store.BudgetHold, error) {
	hs, err := list(ctx, r.C, scanHold, holdColumns+` WHERE project = $1 AND budget = $2 ORDER BY id`, project, budget)
	if err != nil {
		return nil, fmt.Errorf("list holds of budget %s: %w", budget, err)
	}
	return hs, nil
}

// PutBudget implements [store.Tx.PutBudget].
func (t *Tx) PutBudget(ctx context.Context, b store.Budget) error {
	if err := required("budget", "a project", b.Project, "a name", b.Name, "a scope", b.Scope, "a window", b.Window,
		"a zone", b.TimeZone, "a setter", b.SetBy); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO budgets (project, name, scope, target, window_kind, time_zone, max_tokens,
		max_micro_usd, warn_percent, set_by, set_at, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (project, name) DO UPDATE SET scope = excluded.scope, target = excluded.target,
		window_kind = excluded.window_kind, time_zone = excluded.time_zone, max_tokens = excluded.max_tokens,
		max_micro_usd = excluded.max_micro_usd, warn_percent = excluded.warn_percent, set_by = excluded.set_by,
		set_at = excluded.set_at, version = excluded.version`,
		b.Project, b.Name, b.Scope, b.Target, b.Window, b.TimeZone, b.MaxTokens, b.MaxMicroUSD, int64(b.WarnPercent),
		b.SetBy, nanos(b.SetAt), b.Version); err != nil {
		return fmt.Errorf("put budget %s: %w", b.Name, err)
	}
	return nil
}

// PutBudgetSpend implements [store.Tx.PutBudgetSpend].
func (t *Tx) PutBudgetSpend(ctx context.Context, s store.BudgetSpend) error {
	if _, err := t.C.Exec(ctx, `INSERT INTO budget_spend (project, budget, window_start, tokens, micro_usd, unpriced_tokens,
		warned, exhausted) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (project, budget, window_start) DO UPDATE SET tokens = excluded.tokens, micro_usd = excluded.micro_usd,
		unpriced_tokens = excluded.unpriced_tokens, warned = excluded.warned, exhausted = excluded.exhausted`,
		s.Project, s.Budget, windowNanos(s.Window), s.Tokens, s.MicroUSD, s.UnpricedTokens, flag(s.Warned), flag(s.Exhausted)); err != nil {
		return fmt.Errorf("put the spend of budget %s: %w", s.Budget, err)
	}
	return nil
}

// PutBudgetHold implements [store.Tx.PutBudgetHold].
func (t *Tx) PutBudgetHold(ctx context.Context, h store.BudgetHold) error {
	if err := required("budget hold", "an id", h.ID, "a project", h.Project, "a budget", h.Budget); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO budget_holds (project, id, budget, window_start, tokens, micro_usd, until_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		h.Project, h.ID, h.Budget, windowNanos(h.Window), h.Tokens, h.MicroUSD, nanos(h.Until)); err != nil {
		return fmt.Errorf("hold budget %s for %s: %w", h.Budget, h.ID, err)
	}
	return nil
}

// DeleteBudgetHold implements [store.Tx.DeleteBudgetHold].
func (t *Tx) DeleteBudgetHold(ctx context.Context, project, id string) ([]store.BudgetHold, error) {
	hs, err := list(ctx, t.C, scanHold, holdColumns+` WHERE project = $1 AND id = $2 ORDER BY budget`, project, id)
	if err != nil {
		return nil, fmt.Errorf("read hold %s: %w", id, err)
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("release hold %s: %w", id, store.ErrNotFound)
	}
	if _, err := t.C.Exec(ctx, `DELETE FROM budget_holds WHERE project = $1 AND id = $2`, project, id); err != nil {
		return nil, fmt.Errorf("release hold %s: %w", id, err)
	}
	return hs, nil
}

// DeleteBudget implements [store.Tx.DeleteBudget]. The holds and the spend go first:
// each names the budget by a foreign key.
func (t *Tx) DeleteBudget(ctx context.Context, project, name string) error {
	for _, q := range []string{`DELETE FROM budget_holds WHERE project = $1 AND budget = $2`,
		`DELETE FROM budget_spend WHERE project = $1 AND budget = $2`} {
		if _, err := t.C.Exec(ctx, q, project, name); err != nil {
			return fmt.Errorf("remove budget %s: %w", name, err)
		}
	}
	n, err := t.C.Exec(ctx, `DELETE FROM budgets WHERE project = $1 AND name = $2`, project, name)
	if err != nil {
		return fmt.Errorf("remove budget %s: %w", name, err)
	}
	if n == 0 {
		return fmt.Errorf("remove budget %s: %w", name, store.ErrNotFound)
	}
	return nil
}
