package authority_test

import (
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// BenchmarkAuthority_BudgetReserveCharge is what a model request costs the authority when
// a budget counts it: one reservation and one charge, each a store transaction that holds
// the project's head (SQLite).
func BenchmarkAuthority_BudgetReserveCharge(b *testing.B) {
	ctx := b.Context()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "docket.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	p := authoritytest.New(b, authoritytest.Options{Store: st, Key: identity.Key{9}, Agent: "calc"})
	spec := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "calc", Window: "day", MaxTokens: contract.MaxBudgetTokens}}
	if _, err := p.A.SetBudget(ctx, p.Admin, "default", "calc-daily", spec); err != nil {
		b.Fatal(err)
	}
	ask := contract.BudgetReserve{Provider: "openai", Model: "gpt-4o", Tokens: 9000}
	for b.Loop() {
		r, err := p.A.ReserveBudget(ctx, p.Agent, ask)
		if err != nil || !r.Granted {
			b.Fatalf("reserve = %+v, %v", r, err)
		}
		if err := p.A.ChargeBudget(ctx, p.Agent, contract.BudgetCharge{Hold: r.Hold, Provider: "openai", Model: "gpt-4o", InputTokens: 8000, OutputTokens: 200}); err != nil {
			b.Fatal(err)
		}
	}
}
