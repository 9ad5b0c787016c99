package main

import (
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// TestBudget_StopsTheRuntime: docket agent serve asks the authority's budget before each
// model request. Against a model server that reports 110 tokens a request, a budget of
// 200 tokens lets two requests through and stops the third before it is sent: the task
// waits on the budget, named with budget_exhausted, and the model server sees no third
// request. A member's raise wakes the task, which goes on where it stopped and completes
// (docs/budgets.md).
func TestBudget_StopsTheRuntime(t *testing.T) {
	r := newDocketRig(t)
	id, tok := r.agent(t, "spender")
	script, err := scripted.ParseJSON([]byte(`{"turns":[
		{"calls":[{"as":"open","tool":"OpenCase","arguments":{"caseType":"exploration","businessKey":{"topic":"budget"}}}]},
		{"calls":[{"tool":"CloseCase","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"disposition":"abandoned","reason":"only looking"}}]},
		{"final":"closed"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	model := providertest.NewOpenAI(t, script, "")
	r.exec(t, exitOK, nil, "budget", "set", "spender-total", "--agent", "spender", "--window", "total", "--max-tokens", "200")

	srv := r.command(t, nil, "agent", "serve", "--token-file", tok, "--provider", "openai", "--model-url", model.URL, "--model", "m",
		"--listen", "127.0.0.1:0")
	var out syncBuffer
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("docket agent serve:\n%s", out.String())
		}
	})
	posted := r.postTask(t, "--agent", "spender", "look around")
	waiting := r.taskUntil(t, posted.ID, contract.TaskWaiting)
	if len(waiting.Waiting) != 1 || waiting.Waiting[0].Budget != "spender-total" || waiting.Result == nil || waiting.Result.ErrorCode != contract.CodeBudgetExhausted {
		t.Fatalf("waiting task = %+v (result %+v), want it waiting on spender-total with budget_exhausted", waiting, waiting.Result)
	}
	if text, _ := r.exec(t, exitOK, nil, "task", "show", string(posted.ID)); !strings.Contains(text, "waits on budget spender-total") || !strings.Contains(text, "budget_exhausted: budget spender-total has no room") {
		t.Errorf("docket task show =\n%s\nwant the wait on the budget and why", text)
	}
	if n := len(model.Seen()); n != 2 {
		t.Fatalf("the model server saw %d requests, want 2: the third was past the budget", n)
	}
	show, _ := r.exec(t, exitOK, nil, "budget", "show", "spender-total")
	if !strings.Contains(show, "(exhausted)") || !strings.Contains(show, "220 of 200 tokens") || !strings.Contains(show, "220 of the tokens are of models the price table does not name") {
		t.Errorf("docket budget show =\n%s\nwant it exhausted at 220 of 200 tokens, all unpriced", show)
	}
	if n := r.countEvents(t, event.BudgetExhausted, "agent:"+id); n != 1 {
		t.Errorf("%d budget.exhausted events, want 1", n)
	}

	// A member's raise lets it go on where it stopped.
	r.exec(t, exitOK, nil, "budget", "set", "spender-total", "--agent", "spender", "--window", "total", "--max-tokens", "100000")
	done := r.taskUntil(t, posted.ID, contract.TaskCompleted)
	if done.Result == nil || done.Result.Final != "closed" || len(done.Result.ClosedCases) != 1 {
		t.Errorf("completed task = %+v, want the final answer and the closed Case", done.Result)
	}
	if n := len(model.Seen()); n != 3 {
		t.Errorf("the model server saw %d requests, want 3: the stopped one sent once, after the raise", n)
	}
	show, _ = r.exec(t, exitOK, nil, "budget", "show", "spender-total")
	if !strings.Contains(show, "330 of 100000 tokens") || !strings.Contains(show, "(ok)") {
		t.Errorf("docket budget show =\n%s\nwant 330 of 100000 tokens, ok", show)
	}
}

// TestBudget_Remove: docket budget remove removes a budget and says what it was; it is
// gone from docket budget list, recorded as budget.removed, and a second removal is
// refused as not found (docs/budgets.md).
func TestBudget_Remove(t *testing.T) {
	r := newDocketRig(t)
	r.agent(t, "spender")
	r.exec(t, exitOK, nil, "budget", "set", "spender-total", "--agent", "spender", "--window", "total", "--max-tokens", "200")
	out, _ := r.exec(t, exitOK, nil, "budget", "remove", "spender-total")
	if !strings.Contains(out, "budget spender-total removed (it was version 1: agent spender, in total; 0 of 200 tokens)") {
		t.Errorf("docket budget remove =\n%s\nwant what the budget was", out)
	}
	if list, empty := r.exec(t, exitOK, nil, "budget", "list"); list != "" || !strings.Contains(empty, "no budgets") {
		t.Errorf("docket budget list after the removal =\n%s%s\nwant no budgets", list, empty)
	}
	if tail, _ := r.exec(t, exitOK, nil, "events", "tail"); strings.Count(tail, "\t"+event.BudgetRemoved+"\t") != 1 {
		t.Errorf("docket events tail =\n%s\nwant one budget.removed", tail)
	}
	if _, errOut := r.exec(t, exitFailure, nil, "budget", "remove", "spender-total"); !strings.Contains(errOut, "not_found") || !strings.Contains(errOut, "docket budget list") {
		t.Errorf("a second docket budget remove said %q, want not_found and where to look", errOut)
	}
}
