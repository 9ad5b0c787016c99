package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// TestPages_AgentBudget: an Agent's page shows each budget that counts its model
// requests, spend against limit; a budget that stopped a request says so there and on
// Needs you, which links to the Agent's page; a member raises it from the page, and the
// Agent's next request is granted; a member removes it from the page (docs/budgets.md).
func TestPages_AgentBudget(t *testing.T) {
	r := newPagesRig(t)
	ctx := t.Context()
	admin := mustCaller(t, r.testServer)
	at, err := r.a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "spender"})
	if err != nil {
		t.Fatal(err)
	}
	spender, err := r.a.Directory().Authenticate(ctx, identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	spec := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "spender", Window: "day", TimeZone: "Europe/Berlin", MaxTokens: 1000, MaxUSD: 2, WarnPercent: 50}}
	if _, err := r.a.SetBudget(ctx, admin, "default", "spender-daily", spec); err != nil {
		t.Fatal(err)
	}
	ask := contract.BudgetReserve{Provider: "anthropic", Model: "claude-sonnet-4-20250514", Tokens: 100}
	hold, err := r.a.ReserveBudget(ctx, spender, ask)
	if err != nil || !hold.Granted {
		t.Fatalf("reservation = %+v, %v; want granted", hold, err)
	}
	if err := r.a.ChargeBudget(ctx, spender, contract.BudgetCharge{Hold: hold.Hold, Provider: ask.Provider, Model: ask.Model, InputTokens: 1100, OutputTokens: 100}); err != nil {
		t.Fatal(err)
	}
	if refused, err := r.a.ReserveBudget(ctx, spender, ask); err != nil || refused.Granted {
		t.Fatalf("reservation past the limit = %+v, %v; want refused", refused, err)
	}

	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/agents/"+string(at.Agent.ID)), chromedp.WaitVisible(chromedp.ID("budget-spender-daily-stop")))
	got := r.b.Text("#budgets")
	for _, want := range []string{"spender-daily counts agent spender, this day", "Europe/Berlin", "exhausted", "Tokens: 1200 of 1000", "Money: $0.0048 of $2.0000", "was not sent"} {
		if !strings.Contains(got, want) {
			t.Errorf("the Agent's budgets show %q, want %q in it", got, want)
		}
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Agent page with a budget: %q", ps)
	}
	r.b.Screenshot(screenshots, "agent-budget")

	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/needs"), chromedp.WaitVisible(chromedp.ID("budgets-section")))
	if got := r.b.Text("#budgets-section"); !strings.Contains(got, "spender-daily (agent spender) stopped a model request") || !strings.Contains(got, "Raise or reset it") {
		t.Errorf("Needs you shows %q, want the stopped budget with a way to raise it", got)
	}
	r.b.Do(chromedp.Click(chromedp.Search(`//a[text()="Raise or reset it on the Agent's page"]`)), chromedp.WaitVisible(chromedp.ID("budget-spender-daily-tokens")))

	// A member raises it from the page.
	r.b.Do(chromedp.SetValue(chromedp.ID("budget-spender-daily-tokens"), "5000"),
		chromedp.Click(chromedp.ID("budget-spender-daily-set")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Budget set") {
		t.Errorf("after the raise, the notice is %q", got)
	}
	if got := r.b.Text("#budgets"); !strings.Contains(got, "Tokens: 1200 of 5000") || strings.Contains(got, "exhausted") {
		t.Errorf("after the raise, the budgets show %q, want 1200 of 5000 and no stop", got)
	}
	b, err := r.a.Budget(ctx, admin, "default", "spender-daily")
	if err != nil {
		t.Fatal(err)
	}
	if b.MaxTokens != 5000 || b.MaxUSD != 2 || b.TimeZone != "Europe/Berlin" || b.Window != "day" || b.WarnPercent != 50 || b.Version != 2 {
		t.Errorf("after the raise the budget is %+v, want 5000 tokens with the rest kept", b)
	}
	if g, err := r.a.ReserveBudget(ctx, spender, ask); err != nil || !g.Granted {
		t.Errorf("after the raise, a reservation = %+v, %v; want granted", g, err)
	}

	// A member removes it from the page: it is gone from the page and from the authority.
	r.b.Do(chromedp.Click(chromedp.ID("budget-spender-daily-remove")),
		chromedp.WaitVisible(chromedp.ID("budgets-empty")))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Budget removed") {
		t.Errorf("after the removal, the notice is %q", got)
	}
	if _, err := r.a.Budget(ctx, admin, "default", "spender-daily"); contract.CodeOf(err) != contract.CodeNotFound {
		t.Errorf("after the removal, reading the budget = %v, want not_found", err)
	}
}
