package authority_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// eventTypes counts the events of the given types in project default of st.
func eventTypes(t *testing.T, st store.Store, types ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	var after int64
	for {
		evs, err := st.Events(t.Context(), "default", after, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return out
		}
		for _, e := range evs {
			for _, typ := range types {
				if e.Type == typ {
					out[typ]++
				}
			}
			after = e.Seq
		}
	}
}

func reserve(t *testing.T, a *authority.Authority, c identity.Caller, tokens int64) contract.BudgetReservation {
	t.Helper()
	r, err := a.ReserveBudget(t.Context(), c, contract.BudgetReserve{Provider: "anthropic", Model: "claude-sonnet-4-20250514", Tokens: tokens})
	if err != nil {
		t.Fatalf("ReserveBudget: %v", err)
	}
	return r
}

// TestAuthority_Budget_StopsAndRaises: a request is granted while the budget's window has
// room and refused once what it spent reaches the limit (recorded once as
// budget.exhausted); the warning share is recorded once as budget.warned; a member's
// raise gives room again; a reset forgets the window's spend; the next day's window
// starts empty; a priced model is charged in money, an unknown one in tokens only.
func TestAuthority_Budget_StopsAndRaises(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	spec := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "calc", Window: "day", TimeZone: "Europe/Berlin", MaxTokens: 1000, MaxUSD: 1, WarnPercent: 50}}
	b, err := f.a.SetBudget(ctx, f.admin, "default", "calc-daily", spec)
	if err != nil {
		t.Fatal(err)
	}
	if b.Agent != f.agent.ID || b.AgentName != "calc" || b.Version != 1 || b.Spend.WindowStart == nil ||
		!b.Spend.WindowStart.Equal(time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)) {
		t.Errorf("set = %+v, want calc's day from Berlin's midnight (23:00 UTC)", b)
	}
	r := reserve(t, f.a, f.agent, 100)
	if !r.Granted || r.Hold == "" || len(r.Budgets) != 1 || r.Unpriced {
		t.Fatalf("reservation = %+v, want granted, held on calc-daily", r)
	}
	if err := f.a.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: r.Hold, Provider: "anthropic", Model: "claude-sonnet-4-20250514", InputTokens: 500, OutputTokens: 100}); err != nil {
		t.Fatal(err)
	}
	// A charge sent twice counts once.
	if err := f.a.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: r.Hold, Provider: "anthropic", Model: "claude-sonnet-4-20250514", InputTokens: 500, OutputTokens: 100}); err != nil {
		t.Fatal(err)
	}
	b, err = f.a.Budget(ctx, f.admin, "default", "calc-daily")
	if err != nil {
		t.Fatal(err)
	}
	if b.Spend.Tokens != 600 || b.Spend.USD != 0.003 || b.Spend.HeldTokens != 0 || !b.Spend.Warned || b.Spend.Exhausted {
		t.Errorf("spend = %+v, want 600 tokens, $0.003 (500 at $3 + 100 at $15 per million), warned, nothing held", b.Spend)
	}
	// An unknown model counts in tokens only, and says so.
	r = reserve(t, f.a, f.agent, 10)
	if err := f.a.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: r.Hold, Provider: "openai", Model: "local-llama", InputTokens: 300, OutputTokens: 100}); err != nil {
		t.Fatal(err)
	}
	u, err := f.a.ReserveBudget(ctx, f.agent, contract.BudgetReserve{Provider: "openai", Model: "local-llama", Tokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if u.Granted || !u.Unpriced || u.Budget != "calc-daily" || u.Teaching == "" {
		t.Errorf("reservation past the limit = %+v, want refused by calc-daily, unpriced, with a teaching", u)
	}
	if again := reserve(t, f.a, f.agent, 1); again.Granted {
		t.Errorf("a second request past the limit was granted: %+v", again)
	}
	got := eventTypes(t, f.st, event.BudgetSet, event.BudgetWarned, event.BudgetExhausted)
	if got[event.BudgetSet] != 1 || got[event.BudgetWarned] != 1 || got[event.BudgetExhausted] != 1 {
		t.Errorf("events = %v, want one set, one warned and one exhausted (each once per window)", got)
	}
	b, _ = f.a.Budget(ctx, f.admin, "default", "calc-daily")
	if b.Spend.Tokens != 1000 || b.Spend.UnpricedTokens != 400 || !b.Spend.Exhausted {
		t.Errorf("spend = %+v, want 1000 tokens, 400 of them unpriced, exhausted", b.Spend)
	}

	// A raise gives room; the stop of this window may be recorded again.
	spec.MaxTokens = 2000
	if _, err := f.a.SetBudget(ctx, f.admin, "default", "calc-daily", spec); err != nil {
		t.Fatal(err)
	}
	if r := reserve(t, f.a, f.agent, 1); !r.Granted {
		t.Errorf("after a raise = %+v, want granted", r)
	}
	// A lowering under the spend stops again; a reset forgets the window's spend.
	spec.MaxTokens = 500
	if _, err := f.a.SetBudget(ctx, f.admin, "default", "calc-daily", spec); err != nil {
		t.Fatal(err)
	}
	if r := reserve(t, f.a, f.agent, 1); r.Granted {
		t.Errorf("after a lowering = %+v, want refused", r)
	}
	spec.Reset = true
	b, err = f.a.SetBudget(ctx, f.admin, "default", "calc-daily", spec)
	if err != nil {
		t.Fatal(err)
	}
	if b.Spend.Tokens != 0 || b.Spend.Exhausted || b.Spend.Warned || b.Version != 4 {
		t.Errorf("after a reset = %+v, want an empty window at version 4", b)
	}
	// Fill it again, then let the day turn in Berlin.
	r = reserve(t, f.a, f.agent, 1)
	if err := f.a.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: r.Hold, Provider: "anthropic", Model: "claude-sonnet-4-20250514", InputTokens: 600}); err != nil {
		t.Fatal(err)
	}
	if r := reserve(t, f.a, f.agent, 1); r.Granted {
		t.Errorf("a full window granted %+v", r)
	}
	f.clock.Add(21 * time.Hour) // 2026-11-30 00:00 UTC is 01:00 of a new day in Berlin
	if r := reserve(t, f.a, f.agent, 1); !r.Granted {
		t.Errorf("the next day = %+v, want granted", r)
	}
}

// TestAuthority_Budget_WhoMaySet: a member sets a budget; its delegate is refused (the
// console makes its call a card); an Agent may not; a spec the authority cannot keep is
// refused with what to fix; an Agent reserves and charges only its own.
func TestAuthority_Budget_WhoMaySet(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	ok := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "project", Window: "month", MaxUSD: 10}}
	delegate := f.admin
	delegate.Delegate = "asst"
	_, err := f.a.SetBudget(ctx, delegate, "default", "all", ok)
	wantCode(t, err, contract.CodeMemberOnly)
	_, err = f.a.SetBudget(ctx, f.agent, "default", "all", ok)
	wantCode(t, err, contract.CodeForbidden)
	_, err = f.a.ReserveBudget(ctx, f.admin, contract.BudgetReserve{Provider: "openai", Model: "gpt-4o", Tokens: 1})
	wantCode(t, err, contract.CodeForbidden)
	tests := []struct {
		name string
		bn   string
		spec contract.BudgetLimits
		code contract.Code
	}{
		{"bad name", "a b", ok.BudgetLimits, contract.CodeInvalidArgument},
		{"no limit", "x", contract.BudgetLimits{Scope: "project", Window: "day"}, contract.CodeInvalidArgument},
		{"unknown window", "x", contract.BudgetLimits{Scope: "project", Window: "week", MaxTokens: 1}, contract.CodeInvalidArgument},
		{"unknown zone", "x", contract.BudgetLimits{Scope: "project", Window: "day", TimeZone: "Mars/Olympus", MaxTokens: 1}, contract.CodeInvalidArgument},
		{"agent scope without agent", "x", contract.BudgetLimits{Scope: "agent", Window: "day", MaxTokens: 1}, contract.CodeInvalidArgument},
		{"unknown agent", "x", contract.BudgetLimits{Scope: "agent", Agent: "nobody", Window: "day", MaxTokens: 1}, contract.CodeNotFound},
		{"unknown schedule", "x", contract.BudgetLimits{Scope: "schedule", Schedule: "sch_0", Window: "day", MaxTokens: 1}, contract.CodeNotFound},
		{"negative money", "x", contract.BudgetLimits{Scope: "project", Window: "day", MaxUSD: -1}, contract.CodeInvalidArgument},
		{"warning past 100", "x", contract.BudgetLimits{Scope: "project", Window: "day", MaxTokens: 1, WarnPercent: 101}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.SetBudget(ctx, f.admin, "default", tt.bn, contract.BudgetSpec{BudgetLimits: tt.spec})
			wantCode(t, err, tt.code)
		})
	}
	if _, err := f.a.SetBudget(ctx, f.admin, "default", "all", ok); err != nil {
		t.Fatal(err)
	}
	list, err := f.a.Budgets(ctx, f.admin, "default", "calc")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "all" || list[0].WarnPercent != contract.DefaultBudgetWarnPercent || list[0].TimeZone != "UTC" {
		t.Errorf("calc's budgets = %+v, want the project's, warning at the default share, in UTC", list)
	}
}

// TestAuthority_Budget_ConcurrentReservations: two serves sharing a store each reserve
// the last room of a budget at once, round after round: exactly one is granted each
// time, so no two requests are sent past the limit (SQLite, and PostgreSQL with
// DOCKET_TEST_POSTGRES).
func TestAuthority_Budget_ConcurrentReservations(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newOpsFixtureOn(t, s1)
			b := authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now})
			ctx := t.Context()
			spec := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "calc", Window: "total", MaxTokens: 1}, Reset: true}
			for round := range 8 {
				if _, err := f.a.SetBudget(ctx, f.admin, "default", "calc-total", spec); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				start := make(chan struct{})
				got := make([]contract.BudgetReservation, 2)
				errs := make([]error, 2)
				for i, a := range []*authority.Authority{f.a, b} {
					wg.Go(func() {
						<-start
						got[i], errs[i] = a.ReserveBudget(ctx, f.agent, contract.BudgetReserve{Provider: "openai", Model: "gpt-4o", Tokens: 1})
					})
				}
				close(start)
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
				}
				if got[0].Granted == got[1].Granted {
					t.Fatalf("round %d: granted %v and %v; want exactly one of two reservations at the limit", round, got[0].Granted, got[1].Granted)
				}
				won := got[0]
				if !won.Granted {
					won = got[1]
				}
				if err := b.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: won.Hold, Provider: "openai", Model: "gpt-4o", InputTokens: 1}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestAuthority_Budget_TaskWaits: a task whose run was stopped by a budget is reported
// waiting on it; it is not taken again while the budget has no room, and is woken once
// a member raises it.
func TestAuthority_Budget_TaskWaits(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	spec := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "calc", Window: "total", MaxTokens: 10}}
	if _, err := f.a.SetBudget(ctx, f.admin, "default", "calc-total", spec); err != nil {
		t.Fatal(err)
	}
	posted, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "Verify job calc-001."})
	if err != nil {
		t.Fatal(err)
	}
	claim, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{})
	if err != nil || claim.Task == nil || claim.Task.ID != posted.ID {
		t.Fatalf("claim = %+v, %v; want the posted task", claim, err)
	}
	r := reserve(t, f.a, f.agent, 5)
	if err := f.a.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: r.Hold, Provider: "openai", Model: "gpt-4o", InputTokens: 10}); err != nil {
		t.Fatal(err)
	}
	refused := reserve(t, f.a, f.agent, 5)
	if refused.Granted {
		t.Fatalf("reservation past the limit = %+v, want refused", refused)
	}
	rep := contract.TaskReport{Attempt: claim.Task.Attempt, State: contract.TaskWaiting, Waiting: []contract.TaskWait{{Budget: refused.Budget}},
		TaskResult: contract.TaskResult{ErrorCode: contract.CodeBudgetExhausted, Teaching: refused.Teaching, ClosedCases: []contract.ClosedCase{}}}
	if _, err := f.a.ReportTask(ctx, f.agent, posted.ID, rep); err != nil {
		t.Fatal(err)
	}
	_, err = f.a.ReportTask(ctx, f.agent, posted.ID, contract.TaskReport{Attempt: claim.Task.Attempt + 1, State: contract.TaskWaiting,
		Waiting: []contract.TaskWait{{Budget: "calc-total", Tool: "ApplyAction"}}, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}})
	wantCode(t, err, contract.CodeInvalidArgument)
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task != nil {
		t.Fatalf("claim while the budget is spent = %+v, %v; want none", c, err)
	}
	spec.MaxTokens = 100
	if _, err := f.a.SetBudget(ctx, f.admin, "default", "calc-total", spec); err != nil {
		t.Fatal(err)
	}
	woken, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{})
	if err != nil || woken.Task == nil || woken.Task.ID != posted.ID || !woken.Wake {
		t.Fatalf("claim after a raise = %+v, %v; want the task woken", woken, err)
	}
}

// TestAuthority_Budget_HoldLapses: a reservation never charged (its runtime stopped)
// holds its part only until it lapses; a day later the next reservation removes it, and
// its late charge charges nothing.
func TestAuthority_Budget_HoldLapses(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	spec := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "calc", Window: "total", MaxTokens: 100}}
	if _, err := f.a.SetBudget(ctx, f.admin, "default", "calc-total", spec); err != nil {
		t.Fatal(err)
	}
	lost := reserve(t, f.a, f.agent, 100)
	if !lost.Granted {
		t.Fatalf("first reservation = %+v, want granted", lost)
	}
	if r := reserve(t, f.a, f.agent, 1); r.Granted {
		t.Fatalf("a reservation while the whole budget is held = %+v, want refused", r)
	}
	f.clock.Add(time.Hour) // past the hold's 30 minutes
	if r := reserve(t, f.a, f.agent, 1); !r.Granted {
		t.Fatalf("a reservation after the hold lapsed = %+v, want granted", r)
	}
	f.clock.Add(25 * time.Hour)
	next := reserve(t, f.a, f.agent, 1)
	holds, err := f.st.BudgetHolds(ctx, "default", "calc-total")
	if err != nil {
		t.Fatal(err)
	}
	if len(holds) != 1 || holds[0].ID != next.Hold {
		t.Errorf("holds kept = %+v, want only the newest: lapsed ones are removed a day later", holds)
	}
	if err := f.a.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: lost.Hold, Provider: "openai", Model: "gpt-4o", InputTokens: 50}); err != nil {
		t.Fatal(err)
	}
	if b, _ := f.a.Budget(ctx, f.admin, "default", "calc-total"); b.Spend.Tokens != 0 {
		t.Errorf("spend after a removed hold's charge = %+v, want nothing charged", b.Spend)
	}
}

// TestAuthority_Budget_CountsTheSchedulesTasks: a request for a task a schedule's fire
// posted counts against that schedule's budget as well as the Agent's; a request for a
// member's own task, or one whose client key only looks like a fire's, does not.
func TestAuthority_Budget_CountsTheSchedulesTasks(t *testing.T) {
	f := newSchedFixture(t)
	ctx := t.Context()
	s := f.create(t, contract.CreateScheduleRequest{Every: "1h", Missed: contract.MissedSkip})
	for name, lim := range map[string]contract.BudgetLimits{
		"nightly":    {Scope: "schedule", Schedule: string(s.ID), Window: "total", MaxTokens: 1000},
		"calc-total": {Scope: "agent", Agent: "calc", Window: "total", MaxTokens: 1000},
	} {
		if _, err := f.a.SetBudget(ctx, f.admin, "default", name, contract.BudgetSpec{BudgetLimits: lim}); err != nil {
			t.Fatal(err)
		}
	}
	fire, err := f.s.RunNow(ctx, f.admin, "default", s.ID)
	if err != nil || fire.Task == "" {
		t.Fatalf("RunNow = %+v, %v; want a fire with its task", fire, err)
	}
	own, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x", ClientKey: string(s.ID) + ":1"})
	if err != nil {
		t.Fatal(err)
	}
	forged, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "y", ClientKey: "sch_" + strings.Repeat("0", 16) + ":1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		task contract.TaskID
		want []string
	}{
		{"the fire's task", fire.Task, []string{"calc-total", "nightly"}},
		{"no task", "", []string{"calc-total"}},
		{"a key naming no schedule", forged.ID, []string{"calc-total"}},
	}
	// A member's task under a key that names a real schedule of the same Agent reads as
	// that schedule's: its budget is the member's to spend (docs/budgets.md).
	tests = append(tests, struct {
		name string
		task contract.TaskID
		want []string
	}{"a member's task under the schedule's key form", own.ID, []string{"calc-total", "nightly"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := f.a.ReserveBudget(ctx, f.agent, contract.BudgetReserve{Task: tt.task, Provider: "openai", Model: "gpt-4o", Tokens: 1})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, r.Budgets); diff != "" {
				t.Errorf("budgets counted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuthority_Budget_Remove: only a member acting itself removes a budget; the removal
// is recorded as budget.removed with what the budget was; a task that waited on it is
// woken; a reservation in flight that held it and another budget is charged to the other
// alone; a budget set again under the name starts from nothing.
func TestAuthority_Budget_Remove(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	calc := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "calc", Window: "total", MaxTokens: 10}}
	all := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "project", Window: "total", MaxTokens: 1000}}
	for name, spec := range map[string]contract.BudgetSpec{"calc-total": calc, "all": all} {
		if _, err := f.a.SetBudget(ctx, f.admin, "default", name, spec); err != nil {
			t.Fatal(err)
		}
	}
	posted, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "Verify job calc-001."})
	if err != nil {
		t.Fatal(err)
	}
	claim, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{})
	if err != nil || claim.Task == nil || claim.Task.ID != posted.ID {
		t.Fatalf("claim = %+v, %v; want the posted task", claim, err)
	}
	inFlight := reserve(t, f.a, f.agent, 5)
	if !inFlight.Granted || len(inFlight.Budgets) != 2 {
		t.Fatalf("reservation = %+v, want granted on both budgets", inFlight)
	}
	reserve(t, f.a, f.agent, 5)
	refused := reserve(t, f.a, f.agent, 5)
	if refused.Granted || refused.Budget != "calc-total" {
		t.Fatalf("reservation past the limit = %+v, want refused by calc-total", refused)
	}
	rep := contract.TaskReport{Attempt: claim.Task.Attempt, State: contract.TaskWaiting, Waiting: []contract.TaskWait{{Budget: refused.Budget}},
		TaskResult: contract.TaskResult{ErrorCode: contract.CodeBudgetExhausted, Teaching: refused.Teaching, ClosedCases: []contract.ClosedCase{}}}
	if _, err := f.a.ReportTask(ctx, f.agent, posted.ID, rep); err != nil {
		t.Fatal(err)
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task != nil {
		t.Fatalf("claim while the budget is spent = %+v, %v; want none", c, err)
	}

	delegate := f.admin
	delegate.Delegate = "asst"
	refusals := []struct {
		name   string
		caller identity.Caller
		budget string
		code   contract.Code
	}{
		{"a delegate", delegate, "calc-total", contract.CodeMemberOnly},
		{"an agent", f.agent, "calc-total", contract.CodeForbidden},
		{"a bad name", f.admin, "a b", contract.CodeInvalidArgument},
		{"no such budget", f.admin, "nightly", contract.CodeNotFound},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.RemoveBudget(ctx, tt.caller, "default", tt.budget)
			wantCode(t, err, tt.code)
		})
	}

	gone, err := f.a.RemoveBudget(ctx, f.admin, "default", "calc-total")
	if err != nil {
		t.Fatal(err)
	}
	if gone.Name != "calc-total" || gone.Version != 1 || gone.AgentName != "calc" || gone.Spend.HeldTokens != 10 {
		t.Errorf("removed = %+v, want calc-total as it was: version 1, calc's, 10 tokens held", gone)
	}
	if n := eventTypes(t, f.st, event.BudgetRemoved)[event.BudgetRemoved]; n != 1 {
		t.Errorf("budget.removed events = %d, want 1", n)
	}
	_, err = f.a.Budget(ctx, f.admin, "default", "calc-total")
	wantCode(t, err, contract.CodeNotFound)
	_, err = f.a.RemoveBudget(ctx, f.admin, "default", "calc-total")
	wantCode(t, err, contract.CodeNotFound)

	woken, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{})
	if err != nil || woken.Task == nil || woken.Task.ID != posted.ID || !woken.Wake {
		t.Fatalf("claim after the removal = %+v, %v; want the task woken", woken, err)
	}
	if err := f.a.ChargeBudget(ctx, f.agent, contract.BudgetCharge{Hold: inFlight.Hold, Provider: "openai", Model: "gpt-4o", InputTokens: 7}); err != nil {
		t.Fatalf("charge of a hold on a removed budget: %v", err)
	}
	kept, err := f.a.Budget(ctx, f.admin, "default", "all")
	if err != nil {
		t.Fatal(err)
	}
	if kept.Spend.Tokens != 7 {
		t.Errorf("all spent %d tokens, want the 7 charged to it", kept.Spend.Tokens)
	}
	if r := reserve(t, f.a, f.agent, 5); !r.Granted || !cmp.Equal(r.Budgets, []string{"all"}) {
		t.Errorf("reservation after the removal = %+v, want granted on all alone", r)
	}
	again, err := f.a.SetBudget(ctx, f.admin, "default", "calc-total", calc)
	if err != nil {
		t.Fatal(err)
	}
	if again.Version != 1 || again.Spend.Tokens != 0 || again.Spend.HeldTokens != 0 {
		t.Errorf("set again = %+v, want version 1 with nothing spent or held", again)
	}
}
