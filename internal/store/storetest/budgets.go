package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

func testBudgets(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	daily := store.Budget{Project: "p1", Name: "calc-daily", Scope: "agent", Target: "a1", Window: "day", TimeZone: "Europe/Berlin",
		MaxTokens: 10000, MaxMicroUSD: 2_000_000, WarnPercent: 80, SetBy: "member:m1", SetAt: t0, Version: 1}
	total := store.Budget{Project: "p1", Name: "all", Scope: "project", Window: "total", TimeZone: "UTC",
		MaxTokens: 1_000_000, WarnPercent: 90, SetBy: "member:m1", SetAt: t0, Version: 1}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutBudget(ctx, daily); err != nil {
			return err
		}
		return tx.PutBudget(ctx, total)
	})
	refused := []struct {
		name string
		b    store.Budget
		want error
	}{
		{"no name", func() store.Budget { x := daily; x.Name = ""; return x }(), store.ErrInvalid},
		{"a missing project", func() store.Budget { x := daily; x.Project = "nowhere"; return x }(), store.ErrNotFound},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutBudget(ctx, tt.b) })
			wantErr(t, "PutBudget", err, tt.want)
		})
	}
	raised := daily
	raised.MaxTokens, raised.Version, raised.SetAt = 20000, 2, t0.Add(time.Hour)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutBudget(ctx, raised) })
	got, err := s.Budgets(ctx, "p1")
	wantErr(t, "Budgets", err, nil)
	if diff := cmp.Diff([]store.Budget{total, raised}, got); diff != "" {
		t.Errorf("Budgets after a raise (-want +got):\n%s", diff)
	}

	window := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	_, err = s.BudgetSpend(ctx, "p1", "calc-daily", window)
	wantErr(t, "BudgetSpend before a charge", err, store.ErrNotFound)
	spend := store.BudgetSpend{Project: "p1", Budget: "calc-daily", Window: window, Tokens: 1200, MicroUSD: 4500, UnpricedTokens: 200, Warned: true}
	whole := store.BudgetSpend{Project: "p1", Budget: "all", Tokens: 7}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutBudgetSpend(ctx, spend); err != nil {
			return err
		}
		return tx.PutBudgetSpend(ctx, whole)
	})
	spend.Tokens, spend.Exhausted = 20000, true
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutBudgetSpend(ctx, spend) })
	for _, want := range []store.BudgetSpend{spend, whole} {
		got, err := s.BudgetSpend(ctx, "p1", want.Budget, want.Window)
		wantErr(t, "BudgetSpend", err, nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("BudgetSpend of %s (-want +got):\n%s", want.Budget, diff)
		}
	}
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutBudgetSpend(ctx, store.BudgetSpend{Project: "p1", Budget: "nobody", Window: window})
	})
	wantErr(t, "PutBudgetSpend of a missing budget", err, store.ErrNotFound)

	h1 := store.BudgetHold{ID: "h1", Project: "p1", Budget: "calc-daily", Window: window, Tokens: 500, MicroUSD: 100, Until: t0.Add(time.Minute)}
	h1all := store.BudgetHold{ID: "h1", Project: "p1", Budget: "all", Tokens: 500, Until: t0.Add(time.Minute)}
	h2 := store.BudgetHold{ID: "h2", Project: "p1", Budget: "calc-daily", Window: window, Tokens: 9, Until: t0.Add(2 * time.Minute)}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, h := range []store.BudgetHold{h1, h1all, h2} {
			if err := tx.PutBudgetHold(ctx, h); err != nil {
				return err
			}
		}
		return nil
	})
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutBudgetHold(ctx, h1) })
	wantErr(t, "PutBudgetHold of a hold id in use", err, store.ErrConflict)
	holds, err := s.BudgetHolds(ctx, "p1", "calc-daily")
	wantErr(t, "BudgetHolds", err, nil)
	if diff := cmp.Diff([]store.BudgetHold{h1, h2}, holds); diff != "" {
		t.Errorf("BudgetHolds (-want +got):\n%s", diff)
	}
	var released []store.BudgetHold
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		var err error
		released, err = tx.DeleteBudgetHold(ctx, "p1", "h1")
		return err
	})
	if diff := cmp.Diff([]store.BudgetHold{h1all, h1}, released); diff != "" {
		t.Errorf("DeleteBudgetHold (-want +got):\n%s", diff)
	}
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.DeleteBudgetHold(ctx, "p1", "h1")
		return err
	})
	wantErr(t, "DeleteBudgetHold again", err, store.ErrNotFound)
	holds, err = s.BudgetHolds(ctx, "p1", "calc-daily")
	wantErr(t, "BudgetHolds after a release", err, nil)
	if diff := cmp.Diff([]store.BudgetHold{h2}, holds); diff != "" {
		t.Errorf("BudgetHolds after a release (-want +got):\n%s", diff)
	}

	// A removed budget takes its spend and its holds with it; a reservation's hold on
	// another budget stays.
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutBudgetHold(ctx, store.BudgetHold{ID: "h3", Project: "p1", Budget: "all", Tokens: 3, Until: t0.Add(time.Minute)})
	})
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutBudgetHold(ctx, store.BudgetHold{ID: "h3", Project: "p1", Budget: "calc-daily", Window: window, Tokens: 3, Until: t0.Add(time.Minute)})
	})
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteBudget(ctx, "p1", "calc-daily") })
	got, err = s.Budgets(ctx, "p1")
	wantErr(t, "Budgets after a removal", err, nil)
	if diff := cmp.Diff([]store.Budget{total}, got); diff != "" {
		t.Errorf("Budgets after a removal (-want +got):\n%s", diff)
	}
	_, err = s.BudgetSpend(ctx, "p1", "calc-daily", window)
	wantErr(t, "BudgetSpend of a removed budget", err, store.ErrNotFound)
	holds, err = s.BudgetHolds(ctx, "p1", "calc-daily")
	wantErr(t, "BudgetHolds of a removed budget", err, nil)
	if len(holds) != 0 {
		t.Errorf("BudgetHolds of a removed budget = %v, want none", holds)
	}
	holds, err = s.BudgetHolds(ctx, "p1", "all")
	wantErr(t, "BudgetHolds of the kept budget", err, nil)
	if len(holds) != 1 || holds[0].ID != "h3" {
		t.Errorf("BudgetHolds of the kept budget = %v, want h3 alone", holds)
	}
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteBudget(ctx, "p1", "calc-daily") })
	wantErr(t, "DeleteBudget again", err, store.ErrNotFound)
}
