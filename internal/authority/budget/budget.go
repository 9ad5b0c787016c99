// Package budget keeps the budgets the authority holds over Agents' model requests: a
// member's limits per project, Agent or schedule and window, what each window spent, and
// the part held for each request between its reservation and its charge, so that no
// request is sent past a limit by any runtime or serve sharing the store.
package budget

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/price"
	"github.com/docketrun/docket/internal/store"
)

// DefaultHoldFor is how long a reservation holds its part of a budget: a runtime that
// stops between its reservation and its charge frees the part after this.
const DefaultHoldFor = 30 * time.Minute

// Config configures [New].
type Config struct {
	Store   store.Store
	Now     func() time.Time // default: time.Now
	Rand    io.Reader        // default: crypto/rand.Reader
	HoldFor time.Duration    // default: DefaultHoldFor
}

// Keeper keeps the budgets of one store's projects. It is safe for concurrent use: each
// check and hold is made in one store transaction that holds the project's head.
type Keeper struct {
	store   store.Store
	now     func() time.Time
	rand    io.Reader
	holdFor time.Duration
}

// New returns the Keeper over cfg.Store.
func New(cfg Config) *Keeper {
	k := &Keeper{store: cfg.Store, now: cfg.Now, rand: cfg.Rand, holdFor: cmp.Or(max(cfg.HoldFor, 0), DefaultHoldFor)}
	if k.now == nil {
		k.now = time.Now
	}
	return k
}

func (k *Keeper) nowUTC() time.Time { return k.now().UTC().Round(0) }

// Set sets budget name of project for member c acting itself (a delegate's set is a card
// its member confirms; docs/delegates.md): its limits replace the earlier ones, and reset
// forgets what the current window spent. A raise or a reset gives the stopped tasks room:
// they are woken as their runtimes next claim.
func (k *Keeper) Set(ctx context.Context, c identity.Caller, project contract.ProjectID, name string, spec contract.BudgetSpec) (contract.Budget, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Budget{}, err
	}
	if err := contract.CheckBudgetName(name); err != nil {
		return contract.Budget{}, err
	}
	if err := spec.Check(); err != nil {
		return contract.Budget{}, err
	}
	lim := spec.BudgetLimits
	lim.TimeZone = cmp.Or(lim.TimeZone, "UTC")
	lim.WarnPercent = cmp.Or(lim.WarnPercent, contract.DefaultBudgetWarnPercent)
	var target string
	switch lim.Scope {
	case contract.BudgetScopeAgent:
		ag, err := identity.FindAgent(ctx, k.store, project, lim.Agent)
		if err != nil {
			return contract.Budget{}, fmt.Errorf("set budget %s: %w", name, eventlog.Refuse(err, "agent "+lim.Agent))
		}
		target, lim.Agent = ag.ID, ag.ID
	case contract.BudgetScopeSchedule:
		s, err := k.store.Schedule(ctx, lim.Schedule)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (s.Project != string(project) || s.DeletedAt != nil)) {
			return contract.Budget{}, contract.Errorf(contract.CodeNotFound, "project %s has no schedule %s; docket schedule list shows its schedules", project, lim.Schedule)
		}
		if err != nil {
			return contract.Budget{}, fmt.Errorf("set budget %s: read schedule %s: %w", name, lim.Schedule, err)
		}
		target = s.ID
	}
	now := k.nowUTC()
	var out store.Budget
	err := k.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return fmt.Errorf("lock head of %s: %w", project, err)
		}
		prev, _, err := find(ctx, tx, project, name)
		if err != nil {
			return err
		}
		out = store.Budget{Project: string(project), Name: name, Scope: lim.Scope, Target: target, Window: lim.Window,
			TimeZone: lim.TimeZone, MaxTokens: lim.MaxTokens, MaxMicroUSD: microUSD(lim.MaxUSD), WarnPercent: lim.WarnPercent,
			SetBy: string(c.Principal()), SetAt: now, Version: prev.Version + 1}
		if err := tx.PutBudget(ctx, out); err != nil {
			return err
		}
		st, err := standingOf(ctx, tx, out, now)
		if err != nil {
			return err
		}
		sp := st.spend
		if spec.Reset {
			sp = store.BudgetSpend{Project: sp.Project, Budget: sp.Budget, Window: sp.Window}
		}
		// The flags say what this window recorded under the limits now set: a raise
		// above the spend lets a new stop, or a new warning, be recorded once again.
		sp.Exhausted = sp.Exhausted && !spec.Reset && st.full(out) != nil
		sp.Warned = sp.Warned && !spec.Reset && st.warn(out) != nil
		if err := tx.PutBudgetSpend(ctx, sp); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.BudgetSetData{Name: name, BudgetLimits: lim, Version: out.Version, Reset: spec.Reset})
	})
	if err != nil {
		return contract.Budget{}, fmt.Errorf("set budget %s: %w", name, eventlog.Refuse(err, "budget "+name))
	}
	return k.view(ctx, k.store, out, now)
}

// Remove removes budget name of project for member c acting itself (a delegate's is a
// card its member confirms, bound to the budget's version; docs/delegates.md), with what
// its windows spent and the holds on it, and records budget.removed. Its requests no
// longer count against it: a task that waited on it is woken as its runtime next claims
// ([Keeper.Room] of a budget that is gone is room). A reservation that held it as well as
// other budgets is charged to the others alone.
func (k *Keeper) Remove(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Budget, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Budget{}, err
	}
	if err := contract.CheckBudgetName(name); err != nil {
		return contract.Budget{}, err
	}
	now := k.nowUTC()
	var out contract.Budget
	err := k.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return fmt.Errorf("lock head of %s: %w", project, err)
		}
		b, ok, err := find(ctx, tx, project, name)
		if err != nil {
			return err
		}
		if !ok {
			return contract.Errorf(contract.CodeNotFound, "project %s has no budget %s; docket budget list shows its budgets", project, name)
		}
		// What it was is read before it goes, so the answer shows what stopped counting.
		if out, err = k.view(ctx, tx, b, now); err != nil {
			return err
		}
		if err := tx.DeleteBudget(ctx, string(project), name); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.BudgetRemovedData{Name: name, Version: b.Version,
			BudgetLimits: contract.BudgetLimits{Scope: b.Scope, Agent: agentOf(b), Schedule: scheduleOf(b), Window: b.Window,
				TimeZone: b.TimeZone, MaxTokens: b.MaxTokens, MaxUSD: dollars(b.MaxMicroUSD), WarnPercent: b.WarnPercent}})
	})
	if err != nil {
		return contract.Budget{}, fmt.Errorf("remove budget %s: %w", name, eventlog.Refuse(err, "budget "+name))
	}
	return out, nil
}

// agentOf is the Agent b counts, by id; "" unless it is an Agent's budget.
func agentOf(b store.Budget) string {
	if b.Scope == contract.BudgetScopeAgent {
		return b.Target
	}
	return ""
}

// scheduleOf is the schedule b counts; "" unless it is a schedule's budget.
func scheduleOf(b store.Budget) string {
	if b.Scope == contract.BudgetScopeSchedule {
		return b.Target
	}
	return ""
}

// find returns budget name of project, and whether it exists (the zero Budget when not).
func find(ctx context.Context, r store.Reader, project contract.ProjectID, name string) (store.Budget, bool, error) {
	bs, err := r.Budgets(ctx, string(project))
	if err != nil {
		return store.Budget{}, false, err
	}
	for _, b := range bs {
		if b.Name == name {
			return b, true, nil
		}
	}
	return store.Budget{}, false, nil
}

// List returns project's budgets with what their current windows spent, by name, for a
// member; agent (an id or a name), when not empty, keeps those that count its requests.
func (k *Keeper) List(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Budget, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	var only string
	if agent != "" {
		ag, err := identity.FindAgent(ctx, k.store, project, agent)
		if err != nil {
			return nil, fmt.Errorf("list budgets: %w", eventlog.Refuse(err, "agent "+agent))
		}
		only = ag.ID
	}
	bs, err := k.store.Budgets(ctx, string(project))
	if err != nil {
		return nil, fmt.Errorf("list budgets of %s: %w", project, err)
	}
	now := k.nowUTC()
	out := []contract.Budget{}
	for _, b := range bs {
		if only != "" {
			counts, err := k.countsAgent(ctx, b, only)
			if err != nil {
				return nil, err
			}
			if !counts {
				continue
			}
		}
		v, err := k.view(ctx, k.store, b, now)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// countsAgent reports whether b counts the requests of agent.
func (k *Keeper) countsAgent(ctx context.Context, b store.Budget, agent string) (bool, error) {
	switch b.Scope {
	case contract.BudgetScopeAgent:
		return b.Target == agent, nil
	case contract.BudgetScopeSchedule:
		s, err := k.store.Schedule(ctx, b.Target)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read schedule %s of budget %s: %w", b.Target, b.Name, err)
		}
		return s.Agent == agent, nil
	}
	return true, nil
}

// Budget returns budget name of project for a member.
func (k *Keeper) Budget(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Budget, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.Budget{}, err
	}
	b, ok, err := find(ctx, k.store, project, name)
	if err != nil {
		return contract.Budget{}, fmt.Errorf("read budget %s: %w", name, err)
	}
	if !ok {
		return contract.Budget{}, contract.Errorf(contract.CodeNotFound, "project %s has no budget %s; docket budget list shows its budgets", project, name)
	}
	return k.view(ctx, k.store, b, k.nowUTC())
}

// Version returns what a card on budget name of project is bound to: its version, or ok
// false when there is none.
func (k *Keeper) Version(ctx context.Context, project contract.ProjectID, name string) (int64, bool, error) {
	b, ok, err := find(ctx, k.store, project, name)
	if err != nil {
		return 0, false, fmt.Errorf("read budget %s: %w", name, err)
	}
	return b.Version, ok, nil
}

// view is b as a member reads it at now.
func (k *Keeper) view(ctx context.Context, r store.Reader, b store.Budget, now time.Time) (contract.Budget, error) {
	st, err := standingOf(ctx, r, b, now)
	if err != nil {
		return contract.Budget{}, err
	}
	v := contract.Budget{Project: contract.ProjectID(b.Project), Name: b.Name, SetBy: contract.Principal(b.SetBy), SetAt: b.SetAt, Version: b.Version,
		BudgetLimits: contract.BudgetLimits{Scope: b.Scope, Window: b.Window, TimeZone: b.TimeZone, MaxTokens: b.MaxTokens,
			MaxUSD: dollars(b.MaxMicroUSD), WarnPercent: b.WarnPercent},
		Spend: contract.BudgetSpend{Tokens: st.spend.Tokens, USD: dollars(st.spend.MicroUSD), UnpricedTokens: st.spend.UnpricedTokens,
			HeldTokens: st.heldTokens, HeldUSD: dollars(st.heldMicro), Warned: st.spend.Warned, Exhausted: st.spend.Exhausted}}
	switch b.Scope {
	case contract.BudgetScopeAgent:
		v.Agent = b.Target
		ag, err := r.Agent(ctx, b.Target)
		if err != nil {
			return contract.Budget{}, fmt.Errorf("read agent %s of budget %s: %w", b.Target, b.Name, err)
		}
		v.AgentName = ag.Name
	case contract.BudgetScopeSchedule:
		v.Schedule = b.Target
	}
	if start, end, ok := window(b, now); ok {
		v.Spend.WindowStart, v.Spend.WindowEnd = &start, &end
	}
	return v, nil
}

// window returns the bounds of b's window that holds now, in UTC; ok is false for a
// budget counted in total.
func window(b store.Budget, now time.Time) (start, end time.Time, ok bool) {
	loc, err := time.LoadLocation(b.TimeZone)
	if err != nil {
		loc = time.UTC // the zone was checked when set; a host without it counts in UTC
	}
	t := now.In(loc)
	switch b.Window {
	case contract.BudgetWindowDay:
		s := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		return s.UTC(), s.AddDate(0, 0, 1).UTC(), true
	case contract.BudgetWindowMonth:
		s := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
		return s.UTC(), s.AddDate(0, 1, 0).UTC(), true
	}
	return time.Time{}, time.Time{}, false
}

// standing is what one budget's current window spent and holds.
type standing struct {
	spend                 store.BudgetSpend
	heldTokens, heldMicro int64
}

// standingOf reads b's current window at now: its spend, and the holds not yet lapsed.
func standingOf(ctx context.Context, r store.Reader, b store.Budget, now time.Time) (standing, error) {
	start, _, _ := window(b, now)
	sp, err := r.BudgetSpend(ctx, b.Project, b.Name, start)
	if errors.Is(err, store.ErrNotFound) {
		sp, err = store.BudgetSpend{Project: b.Project, Budget: b.Name, Window: start}, nil
	}
	if err != nil {
		return standing{}, err
	}
	holds, err := r.BudgetHolds(ctx, b.Project, b.Name)
	if err != nil {
		return standing{}, err
	}
	st := standing{spend: sp}
	for _, h := range holds {
		if h.Window.Equal(start) && now.Before(h.Until) {
			st.heldTokens += h.Tokens
			st.heldMicro += h.MicroUSD
		}
	}
	return st, nil
}

// full returns the crossing of the first limit of b its window has reached, spent and
// held together, tokens first; nil while every limit has room.
func (s standing) full(b store.Budget) *contract.BudgetCrossing {
	return s.crossing(b, 100)
}

// warn returns the crossing of the first limit whose warning share the window's spend
// has reached; nil when none has.
func (s standing) warn(b store.Budget) *contract.BudgetCrossing {
	return standing{spend: s.spend}.crossing(b, b.WarnPercent)
}

func (s standing) crossing(b store.Budget, percent int) *contract.BudgetCrossing {
	used := s.spend.Tokens + s.heldTokens
	if b.MaxTokens > 0 && used*100 >= b.MaxTokens*int64(percent) {
		return &contract.BudgetCrossing{Budget: b.Name, Kind: "tokens", Used: float64(used), Limit: float64(b.MaxTokens)}
	}
	usd := s.spend.MicroUSD + s.heldMicro
	if b.MaxMicroUSD > 0 && usd*100 >= b.MaxMicroUSD*int64(percent) {
		return &contract.BudgetCrossing{Budget: b.Name, Kind: "usd", Used: dollars(usd), Limit: dollars(b.MaxMicroUSD)}
	}
	return nil
}

// microUSD is dollars in millionths, rounded to the nearest.
func microUSD(dollars float64) int64 { return int64(math.Round(dollars * 1e6)) }

func dollars(micro int64) float64 { return float64(micro) / 1e6 }

// priced returns the price of provider's model from the one table.
func priced(provider, model string) (price.Price, bool) { return price.Lookup(provider, model) }
