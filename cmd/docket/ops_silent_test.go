package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestOps_NamesBudgetWaitsAndPendingCancels: nothing goes silent. A task waiting on an
// exhausted budget and a cancel its runtime has not taken make no Operation; docket ops
// and docket doctor name both: the budget with its limit, its spend and who raises it,
// and the cancel with who asked and since when. The Agent's runtime is played by hand
// over the API, as docket agent serve would act, so that the cancel stays untaken.
func TestOps_NamesBudgetWaitsAndPendingCancels(t *testing.T) {
	r := newDocketRig(t)
	ctx := t.Context()
	id, tokFile := r.agent(t, "quiet")
	r.exec(t, exitOK, nil, "budget", "set", "quiet-cap", "--agent", "quiet", "--window", "total", "--max-tokens", "100")
	tok, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	rt := r.memberClient(t)
	rt.api.Token = string(tok) // the Agent's runtime

	// One request spends past the budget; the next is refused, and the task waits on it.
	spender := r.postTask(t, "--agent", "quiet", "spend")
	claim, err := rt.api.ClaimTask(ctx, 0)
	if err != nil || claim.Task == nil || claim.Task.ID != spender.ID {
		t.Fatalf("claim = %+v, %v; want the posted task", claim, err)
	}
	ask := contract.BudgetReserve{Task: spender.ID, Conversation: spender.Conversation, Provider: "openai", Model: "m", Tokens: 50}
	g, err := rt.api.ReserveBudget(ctx, ask)
	if err != nil || !g.Granted {
		t.Fatalf("reservation = %+v, %v; want it granted", g, err)
	}
	if err := rt.api.ChargeBudget(ctx, contract.BudgetCharge{Hold: g.Hold, Provider: "openai", Model: "m", InputTokens: 100, OutputTokens: 20}); err != nil {
		t.Fatal(err)
	}
	if g, err = rt.api.ReserveBudget(ctx, ask); err != nil || g.Granted {
		t.Fatalf("reservation past the budget = %+v, %v; want it refused", g, err)
	}
	if _, err := rt.api.ReportTask(ctx, spender.ID, contract.TaskReport{Attempt: claim.Task.Attempt, State: contract.TaskWaiting,
		Waiting: []contract.TaskWait{{Budget: "quiet-cap"}}, TaskResult: contract.TaskResult{ErrorCode: contract.CodeBudgetExhausted, Teaching: g.Teaching,
			ClosedCases: []contract.ClosedCase{}}}); err != nil {
		t.Fatal(err)
	}

	// A task claimed and then cancelled: its runtime never renews, so never takes it.
	held := r.postTask(t, "--agent", "quiet", "hold on")
	if claim, err = rt.api.ClaimTask(ctx, 0); err != nil || claim.Task == nil || claim.Task.ID != held.ID {
		t.Fatalf("claim = %+v, %v; want the second task", claim, err)
	}
	r.exec(t, exitOK, nil, "task", "cancel", string(held.ID))

	budget := regexp.QuoteMeta("task "+string(spender.ID)+" of agent "+id+": waits on budget quiet-cap (exhausted, agent quiet, in total): spent 120 of 100 tokens; "+
		"a member of the project raises or resets it (docket budget set quiet-cap …), else its window turns; last set by member:") + `\S+`
	cancel := regexp.QuoteMeta("task "+string(held.ID)+" of agent "+id+": cancel asked by member:") + `\S+ at \S+ \(\d+s ago\), not yet taken by its runtime: its runtime has not`
	ops, _ := r.exec(t, exitOK, nil, "ops")
	for _, want := range []string{budget, cancel} {
		if !regexp.MustCompile(want).MatchString(ops) {
			t.Errorf("docket ops =\n%s\nwant a line matching %s", ops, want)
		}
	}
	doctor, _ := r.command(t, nil, "doctor").Output()
	for _, want := range []string{`warn +task +` + strings.TrimPrefix(budget, "task "), `warn +task +` + strings.TrimPrefix(cancel, "task ")} {
		if !regexp.MustCompile(want).Match(doctor) {
			t.Errorf("docket doctor =\n%s\nwant a warning matching %s", doctor, want)
		}
	}
}
