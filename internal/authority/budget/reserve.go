package budget

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// Reserve is the calling Agent runtime's ask before one model request: the budgets the
// request counts against (the project's, the Agent's, and those of schedule, the
// schedule whose fire posted the request's task, when not empty) are read, and when every
// one has room — what its window spent and holds is below each of its limits — a part
// of each (req.Tokens, priced) is held for the request until it is charged. The check
// and the holds are one store transaction holding the project's head, so two runtimes
// or serves sharing the store cannot both take the last room. A budget without room
// refuses the request (its stop is recorded once per window as budget.exhausted) and
// holds nothing: the runtime does not send it.
func (k *Keeper) Reserve(ctx context.Context, c identity.Caller, req contract.BudgetReserve, schedule string) (contract.BudgetReservation, error) {
	project, err := agentOnly(c)
	if err != nil {
		return contract.BudgetReservation{}, err
	}
	if err := contract.CheckBudgetReserve(req); err != nil {
		return contract.BudgetReservation{}, err
	}
	pr, ok := priced(req.Provider, req.Model)
	// The estimate is priced at the output price, the dearer one: a hold is an upper bound.
	out := contract.BudgetReservation{Unpriced: !ok}
	estimate := pr.MicroUSD(0, req.Tokens)
	// Most requests count against no budget: they are granted on a read, without the
	// project's head lock. A budget set meanwhile counts from the next request, as it
	// would had it been set a moment later.
	bs, err := k.store.Budgets(ctx, string(project))
	if err != nil {
		return contract.BudgetReservation{}, fmt.Errorf("reserve budget: %w", err)
	}
	if !slices.ContainsFunc(bs, func(b store.Budget) bool { return counts(b, c.ID, schedule) }) {
		return contract.BudgetReservation{Granted: true, Unpriced: !ok}, nil
	}
	id, err := newHold(k.rand)
	if err != nil {
		return contract.BudgetReservation{}, err
	}
	err = k.store.Update(ctx, func(tx store.Tx) error {
		out = contract.BudgetReservation{Unpriced: !ok}
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return fmt.Errorf("lock head of %s: %w", project, err)
		}
		bs, err := tx.Budgets(ctx, string(project))
		if err != nil {
			return err
		}
		now := k.nowUTC()
		var counted []store.Budget
		for _, b := range bs {
			if counts(b, c.ID, schedule) {
				counted = append(counted, b)
			}
		}
		if err := sweepLapsed(ctx, tx, counted, now); err != nil {
			return err
		}
		for _, b := range counted {
			st, err := standingOf(ctx, tx, b, now)
			if err != nil {
				return err
			}
			full := st.full(b)
			if full == nil {
				continue
			}
			out.Budget = b.Name
			out.Teaching = fmt.Sprintf("budget %s has no room: %s of %s spent or held in its %s window; the request was not sent, and the task waits until a member raises or resets it (docket budget set %s …) or its window turns",
				b.Name, number(full.Kind, full.Used), number(full.Kind, full.Limit), b.Window, b.Name)
			if st.spend.Exhausted {
				return nil // recorded once per window
			}
			sp := st.spend
			sp.Exhausted = true
			if err := tx.PutBudgetSpend(ctx, sp); err != nil {
				return err
			}
			full.Agent, full.Task, full.WindowStart = contract.AgentID(c.ID), req.Task, windowStart(sp.Window)
			return eventlog.Append(ctx, tx, project, c.Principal(), now, event.BudgetExhaustedData{BudgetCrossing: *full})
		}
		out.Granted = true
		if len(counted) == 0 {
			return nil // nothing counts this request: nothing to hold or charge
		}
		until := now.Add(k.holdFor)
		out.Hold, out.Until = id, &until
		for _, b := range counted {
			start, _, _ := window(b, now)
			h := store.BudgetHold{ID: id, Project: string(project), Budget: b.Name, Window: start, Tokens: req.Tokens, MicroUSD: estimate, Until: until}
			if err := tx.PutBudgetHold(ctx, h); err != nil {
				return err
			}
			out.Budgets = append(out.Budgets, b.Name)
		}
		return nil
	})
	if err != nil {
		return contract.BudgetReservation{}, fmt.Errorf("reserve budget: %w", eventlog.Refuse(err, "project "+string(project)))
	}
	return out, nil
}

// Charge charges what a model request used, as its provider reported it, to every budget
// its reservation held, in the window it was held in, and frees the holds. A window that
// reaches its warning share records budget.warned, once. A hold charged already, or never
// made, charges nothing: a charge sent twice counts once.
func (k *Keeper) Charge(ctx context.Context, c identity.Caller, ch contract.BudgetCharge) error {
	project, err := agentOnly(c)
	if err != nil {
		return err
	}
	if err := contract.CheckBudgetCharge(ch); err != nil {
		return err
	}
	pr, ok := priced(ch.Provider, ch.Model)
	tokens := ch.InputTokens + ch.OutputTokens
	err = k.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return fmt.Errorf("lock head of %s: %w", project, err)
		}
		holds, err := tx.DeleteBudgetHold(ctx, string(project), ch.Hold)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		now := k.nowUTC()
		for _, h := range holds {
			b, found, err := find(ctx, tx, project, h.Budget)
			if err != nil {
				return err
			}
			if !found {
				continue
			}
			sp, err := tx.BudgetSpend(ctx, h.Project, h.Budget, h.Window)
			if errors.Is(err, store.ErrNotFound) {
				sp, err = store.BudgetSpend{Project: h.Project, Budget: h.Budget, Window: h.Window}, nil
			}
			if err != nil {
				return err
			}
			sp.Tokens += tokens
			if ok {
				sp.MicroUSD += pr.MicroUSD(ch.InputTokens, ch.OutputTokens)
			} else {
				sp.UnpricedTokens += tokens
			}
			warn := standing{spend: sp}.warn(b)
			record := warn != nil && !sp.Warned
			sp.Warned = sp.Warned || warn != nil
			if err := tx.PutBudgetSpend(ctx, sp); err != nil {
				return err
			}
			if record {
				warn.Agent, warn.WindowStart = contract.AgentID(c.ID), windowStart(sp.Window)
				if err := eventlog.Append(ctx, tx, project, c.Principal(), now, event.BudgetWarnedData{BudgetCrossing: *warn}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("charge hold %s: %w", ch.Hold, eventlog.Refuse(err, "project "+string(project)))
	}
	return nil
}

// Room reports whether budget name of project has room now for another request: what a
// task waiting on it needs to be woken. A budget that no longer exists has room.
func (k *Keeper) Room(ctx context.Context, project contract.ProjectID, name string) (bool, error) {
	b, ok, err := find(ctx, k.store, project, name)
	if err != nil || !ok {
		return true, err
	}
	st, err := standingOf(ctx, k.store, b, k.nowUTC())
	if err != nil {
		return false, fmt.Errorf("read budget %s: %w", name, err)
	}
	return st.full(b) == nil, nil
}

// lapsedKept is how long a lapsed hold is kept before a reservation removes it: a
// runtime that stopped between its reservation and its charge never charges it, and a
// charge that comes after it is removed charges nothing.
const lapsedKept = 24 * time.Hour

// sweepLapsed removes the holds on bs that lapsed more than lapsedKept ago, so that the
// holds a budget keeps are bounded by the requests of one day.
func sweepLapsed(ctx context.Context, tx store.Tx, bs []store.Budget, now time.Time) error {
	for _, b := range bs {
		holds, err := tx.BudgetHolds(ctx, b.Project, b.Name)
		if err != nil {
			return err
		}
		for _, h := range holds {
			if h.Until.Add(lapsedKept).Before(now) {
				if _, err := tx.DeleteBudgetHold(ctx, h.Project, h.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
		}
	}
	return nil
}

// counts reports whether b counts a request of agent for a task of schedule ("" when the
// task came from no schedule).
func counts(b store.Budget, agent, schedule string) bool {
	switch b.Scope {
	case contract.BudgetScopeAgent:
		return b.Target == agent
	case contract.BudgetScopeSchedule:
		return schedule != "" && b.Target == schedule
	}
	return true
}

// agentOnly refuses callers other than an Agent of one project: reservations and
// charges are its runtime's.
func agentOnly(c identity.Caller) (contract.ProjectID, error) {
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return "", contract.Errorf(contract.CodeForbidden, "only an Agent's runtime reserves and charges its model requests; use the agent token the runtime was given")
	}
	return c.Projects[0], nil
}

// newHold mints a reservation's id: 16 random bytes, since the id is what charges it.
func newHold(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, 16)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("mint a hold id: %w", err)
	}
	return "bh_" + hex.EncodeToString(b), nil
}

func windowStart(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// number prints an amount of kind: whole tokens, or dollars to a hundredth of a cent.
func number(kind string, v float64) string {
	if kind == "usd" {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("%.0f tokens", v)
}
