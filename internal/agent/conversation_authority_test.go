package agent_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

func TestAuthorityConversations(t *testing.T) {
	r := newAuthorityRig(t, time.Second)
	ctx := t.Context()
	const sentinel = "sk-SENTINEL-conv-1"
	store := &agent.AuthorityConversations{API: &apiclient.Client{URL: r.api, Token: r.token}, Key: agent.NewKey(sentinel)}
	if _, err := store.Load(ctx, "c1"); !errors.Is(err, agent.ErrNoConversation) {
		t.Fatalf("Load of a missing conversation = %v, want ErrNoConversation", err)
	}
	c := &agent.Conversation{ID: "c1", Messages: []agent.Message{{Role: agent.RoleUser, Text: "go"}}}
	steps := []func(){
		func() {},
		func() {
			c.Messages = append(c.Messages, agent.Message{Role: agent.RoleAssistant, Calls: []agent.ToolCall{{ID: "k1", Name: "QueryBoard", Arguments: json.RawMessage(`{}`)}}})
			c.InFlight = &agent.Pending{CallID: "k1", Tool: "QueryBoard", After: 2}
		},
		func() {
			c.InFlight = nil
			c.Messages = append(c.Messages, agent.Message{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "k1", Content: "echoed " + sentinel}}})
		},
		func() { c.Messages[0].Text = "go, and then stop" }, // an earlier message changes
		func() {
			c.Unread = []string{"an outcome"}
			c.LastOrdinal, c.Spent = 4, agent.Spent{Turns: 1, InputTokens: 10}
		},
	}
	for i, step := range steps {
		step()
		if err := store.Save(ctx, c); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	// A restarted runtime's store knows only what the authority kept.
	got, err := (&agent.AuthorityConversations{API: &apiclient.Client{URL: r.api, Token: r.token}}).Load(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := *c
	want.Messages = append([]agent.Message(nil), c.Messages...)
	want.Messages[2] = agent.Message{Role: agent.RoleUser, Results: []agent.ToolResult{{CallID: "k1", Content: "echoed [redacted]"}}}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("Load after saves (-want +got):\n%s", diff)
	}

	// The authority kept one event per save, each holding only the messages from the
	// first that changed.
	events, err := r.auth.Events(ctx, r.admin, "default", 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var froms []int
	for _, e := range events {
		if e.Type == event.ConversationSaved {
			var d event.ConversationSavedData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			froms = append(froms, d.From)
		}
	}
	if diff := cmp.Diff([]int{0, 1, 2, 0, 3}, froms); diff != "" {
		t.Errorf("saves start at (-want +got):\n%s", diff)
	}
	conv, err := r.auth.Conversation(ctx, r.admin, "default", "calc", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Messages) != 3 || strings.Contains(string(conv.State)+string(conv.Messages[2]), sentinel) {
		t.Errorf("authority holds %d messages, state %s; want 3 and no key", len(conv.Messages), conv.State)
	}

	// A second runtime that saves after the first did is refused: saves never interleave.
	other := &agent.AuthorityConversations{API: &apiclient.Client{URL: r.api, Token: r.token}}
	stale, err := other.Load(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	c.Unread = nil
	if err := store.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	stale.Unread = append(stale.Unread, "more")
	if err := other.Save(ctx, stale); contract.CodeOf(err) != contract.CodeConversationConflict {
		t.Errorf("a stale save = %v, want %s", err, contract.CodeConversationConflict)
	}

	// A bad token is the authority's refusal, with its code.
	bad := &agent.AuthorityConversations{API: &apiclient.Client{URL: r.api, Token: "dkt_agt_nope"}}
	if _, err := bad.Load(ctx, "c1"); contract.CodeOf(err) != contract.CodeUnauthenticated {
		t.Errorf("Load with a bad token = %v, want %s", err, contract.CodeUnauthenticated)
	}
}

func TestLoop_ConversationBudget(t *testing.T) {
	r := newAuthorityRig(t, time.Second)
	rec := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"}]},{"final":"first"},{"calls":[{"tool":"QueryBoard"}]},{"final":"never"}]}`)
	budget := agent.Budget{MaxTurns: 3}
	send := func(text string) (agent.Outcome, error) {
		t.Helper()
		// Each Send is a new run with a fresh run budget and a fresh store: the
		// conversation's budget counts across runs from what the authority kept.
		r.store = r.newStore()
		meter, err := agent.NewMeter(agent.Budget{MaxTurns: 10}, "scripted", nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.loop(t, rec, func(c *agent.LoopConfig) { c.Meter, c.ConversationBudget = meter, budget }).Send(t.Context(), "c1", text)
	}
	if out, err := send("first task"); err != nil || !strings.HasSuffix(out.Final, "first") {
		t.Fatalf("first run = %+v, %v; want it to finish", out, err)
	}
	_, err := send("second task")
	be, ok := errors.AsType[*agent.BudgetError](err)
	if !ok || be.Scope != agent.ScopeConversation || be.Kind != agent.BudgetTurns || be.Spent.Turns != 3 {
		t.Fatalf("second run error = %v, want the conversation's turn budget after 3 turns", err)
	}
	if code, _, _ := head(t, results(t, r.store, "c1")[1]); code != contract.CodeNotExecuted {
		t.Errorf("the call of the turn that spent the budget shows %q, want %s", code, contract.CodeNotExecuted)
	}
	// A third run stops before asking the model at all.
	_, err = send("third task")
	if be, ok := errors.AsType[*agent.BudgetError](err); !ok || be.Scope != agent.ScopeConversation {
		t.Fatalf("third run error = %v, want the conversation's budget", err)
	}
	if n := len(rec.requests()); n != 3 {
		t.Errorf("the model was asked %d times, want 3", n)
	}
	conv, err := r.auth.Conversation(t.Context(), r.admin, "default", "calc", "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.BudgetExhausted{
		{Scope: "conversation", Kind: "turns", Limit: 3, Used: 3, Turns: 3},
		{Scope: "conversation", Kind: "turns", Limit: 3, Used: 3, Turns: 3},
	}
	if diff := cmp.Diff(want, conv.Budgets); diff != "" {
		t.Errorf("budget events (-want +got):\n%s", diff)
	}
}
