package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// budgetCmd sets and reads the budgets the authority holds over Agents' model requests
// (docs/budgets.md): per project, Agent or schedule, per day, month or in total.
type budgetCmd struct {
	Set    budgetSetCmd    `cmd:"" help:"Set a budget on model requests (make it, raise or lower it), or reset its window."`
	Show   budgetShowCmd   `cmd:"" help:"Show a budget: its limits and what its current window spent and holds."`
	List   budgetListCmd   `cmd:"" help:"List the project's budgets with what their current windows spent."`
	Remove budgetRemoveCmd `cmd:"" help:"Remove a budget with what its windows spent: its requests no longer count against it."`
}

type budgetSetCmd struct {
	clientFlags
	Name      string  `arg:"" help:"The budget's name in the project (letters, digits, '_', '.', '-')."`
	Agent     string  `xor:"scope" help:"Count one Agent's requests (name or id); without --agent or --schedule, the whole project's."`
	Schedule  string  `xor:"scope" help:"Count the requests of the tasks one schedule's fires post (sch_…)."`
	Window    string  `enum:"day,month,total" default:"day" help:"The window the limits hold over: day, month (in --tz) or total."`
	TZ        string  `name:"tz" help:"The IANA time zone the day or month is counted in (default UTC)."`
	MaxTokens int64   `name:"max-tokens" help:"The most input plus output tokens per window (0: no token limit)."`
	MaxUSD    float64 `name:"max-usd" help:"The most US dollars per window, at the price table's prices (0: no money limit)."`
	Warn      int     `help:"The percent of a limit at which the budget warns (default 80)."`
	Reset     bool    `help:"Forget what the current window spent, as well as setting the limits."`
}

func (c *budgetSetCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	spec := contract.BudgetSpec{Reset: c.Reset, BudgetLimits: contract.BudgetLimits{Scope: contract.BudgetScopeProject,
		Agent: c.Agent, Schedule: c.Schedule, Window: c.Window, TimeZone: c.TZ, MaxTokens: c.MaxTokens, MaxUSD: c.MaxUSD, WarnPercent: c.Warn}}
	switch {
	case c.Agent != "":
		spec.Scope = contract.BudgetScopeAgent
	case c.Schedule != "":
		spec.Scope = contract.BudgetScopeSchedule
	}
	var b contract.Budget
	if err := cl.do(ctx, http.MethodPut, projectPath(c.Project, "budgets", c.Name), spec, &b); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, b)
	}
	_, err = fmt.Fprintf(e.Stdout, "budget %s (version %d): %s, %s; %s\n", b.Name, b.Version, budgetScope(b), budgetWindow(b), budgetUse(b))
	return err
}

type budgetShowCmd struct {
	clientFlags
	Name string `arg:"" help:"The budget's name."`
}

func (c *budgetShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var b contract.Budget
	if err := cl.do(ctx, http.MethodGet, projectPath(c.Project, "budgets", c.Name), nil, &b); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, b)
	}
	s := b.Spend
	_, err = fmt.Fprintf(e.Stdout, "budget %s (%s)\n  counts     %s\n  window     %s\n  spent      %s\n  held       %d tokens, %s, for requests in flight\n  warns at   %d%%\n  set by     %s at %s (version %d)\n",
		b.Name, budgetState(b), budgetScope(b), budgetWindow(b), budgetUse(b), s.HeldTokens, usd(s.HeldUSD), b.WarnPercent, b.SetBy, b.SetAt.Format(time.RFC3339), b.Version)
	if err == nil && s.UnpricedTokens > 0 {
		_, err = fmt.Fprintf(e.Stdout, "  unpriced   %d of the tokens are of models the price table does not name: counted in tokens only\n", s.UnpricedTokens)
	}
	if err == nil && s.Exhausted {
		_, err = fmt.Fprintf(e.Stdout, "  a request was stopped in this window: raise it (docket budget set %s … --max-tokens N), reset it (--reset) or remove it (docket budget remove %[1]s)\n", b.Name)
	}
	return err
}

type budgetRemoveCmd struct {
	clientFlags
	Name string `arg:"" help:"The budget's name."`
}

func (c *budgetRemoveCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var b contract.Budget
	if err := cl.do(ctx, http.MethodDelete, projectPath(c.Project, "budgets", c.Name), nil, &b); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, b)
	}
	_, err = fmt.Fprintf(e.Stdout, "budget %s removed (it was version %d: %s, %s; %s); a task that waited on it goes on\n",
		b.Name, b.Version, budgetScope(b), budgetWindow(b), budgetUse(b))
	return err
}

type budgetListCmd struct {
	clientFlags
	Agent string `help:"Only the budgets that count this Agent's requests (name or id)."`
}

func (c *budgetListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	path := projectPath(c.Project, "budgets")
	if c.Agent != "" {
		path += "?" + url.Values{"agent": {c.Agent}}.Encode()
	}
	items, err := list[contract.Budget](ctx, cl, path)
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, b := range items {
		rows = append(rows, []string{b.Name, budgetScope(b), budgetWindow(b), budgetUse(b), budgetState(b)})
	}
	return writeList(e, []string{"name", "counts", "window", "spent", "state"}, rows,
		"no budgets; docket budget set NAME --agent calc --max-usd 5 makes one")
}

// budgetScope says whose requests b counts.
func budgetScope(b contract.Budget) string {
	switch b.Scope {
	case contract.BudgetScopeAgent:
		return "agent " + b.AgentName
	case contract.BudgetScopeSchedule:
		return "schedule " + b.Schedule
	}
	return "the whole project"
}

// budgetWindow says which window b's spend is of.
func budgetWindow(b contract.Budget) string {
	if b.Spend.WindowStart == nil {
		return "in total"
	}
	return fmt.Sprintf("%s from %s", b.Window, inZone(*b.Spend.WindowStart, b.TimeZone))
}

// budgetUse is what b's window spent against each of its limits.
func budgetUse(b contract.Budget) string {
	out := ""
	if b.MaxTokens > 0 {
		out = fmt.Sprintf("%d of %d tokens", b.Spend.Tokens, b.MaxTokens)
	} else {
		out = fmt.Sprintf("%d tokens", b.Spend.Tokens)
	}
	if b.MaxUSD > 0 {
		out += fmt.Sprintf(", %s of %s", usd(b.Spend.USD), usd(b.MaxUSD))
	}
	return out
}

// budgetState is ok, warned (past its warning share) or exhausted (a request stopped).
func budgetState(b contract.Budget) string {
	switch {
	case b.Spend.Exhausted:
		return "exhausted"
	case b.Spend.Warned:
		return "warned"
	}
	return "ok"
}

func usd(v float64) string { return fmt.Sprintf("$%.4f", v) }
