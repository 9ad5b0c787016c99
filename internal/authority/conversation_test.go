package authority_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
)

// newAgentCaller creates Agent name in project default and returns it as a caller.
func newAgentCaller(t *testing.T, f *fixture, name string) authority.Caller {
	t.Helper()
	at, err := f.a.CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.a.Authenticate(t.Context(), authority.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func msgs(texts ...string) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(texts))
	for _, s := range texts {
		b, _ := json.Marshal(map[string]string{"text": s})
		out = append(out, b)
	}
	return out
}

func texts(t *testing.T, ms []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, m := range ms {
		var v struct{ Text string }
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v.Text)
	}
	return out
}

func TestAuthority_SaveConversation(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ag := newAgentCaller(t, f, "calc")

	h1, err := f.a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Messages: msgs("task", "call"), State: json.RawMessage(`{"inFlight":{"callId":"x"}}`)})
	if err != nil {
		t.Fatalf("first save: %v", err)
	}
	// The next save replaces the last message and adds one.
	h2, err := f.a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Prev: h1.Seq, From: 1, Messages: msgs("call2", "result"), State: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatalf("second save: %v", err)
	}
	if h2.Messages != 3 || h2.Seq <= h1.Seq {
		t.Errorf("second save head = %+v, want 3 messages after seq %d", h2, h1.Seq)
	}
	got, err := f.a.OwnConversation(ctx, ag, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"task", "call2", "result"}, texts(t, got.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got.Seq != h2.Seq || string(got.State) != `{}` || got.Agent != contract.AgentID(ag.ID) {
		t.Errorf("conversation = seq %d state %s agent %s; want seq %d, state {}, agent %s", got.Seq, got.State, got.Agent, h2.Seq, ag.ID)
	}

	// A member reads it, by agent name; another Agent does not see it.
	byMember, err := f.a.Conversation(ctx, f.admin, "default", "calc", "c1")
	if err != nil || byMember.Seq != h2.Seq {
		t.Errorf("member read = %+v, %v; want seq %d", byMember, err, h2.Seq)
	}
	other := newAgentCaller(t, f, "other")
	_, err = f.a.OwnConversation(ctx, other, "c1")
	wantCode(t, err, contract.CodeNotFound)

	// A save from a runtime that missed the last one is refused, not interleaved.
	_, err = f.a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Prev: h1.Seq, From: 2, Messages: msgs("late")})
	wantCode(t, err, contract.CodeConversationConflict)

	// A save with prev 0 starts the conversation anew.
	if _, err := f.a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Messages: msgs("fresh")}); err != nil {
		t.Fatal(err)
	}
	got, err = f.a.OwnConversation(ctx, ag, "c1")
	if err != nil || !cmp.Equal([]string{"fresh"}, texts(t, got.Messages)) {
		t.Errorf("after a restart: %v, %v; want [fresh]", texts(t, got.Messages), err)
	}
}

func TestAuthority_SaveConversationRefuses(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ag := newAgentCaller(t, f, "calc")
	h, err := f.a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Messages: msgs("a")})
	if err != nil {
		t.Fatal(err)
	}
	other := newAgentCaller(t, f, "other")
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", contract.MaxConversationEntry) + `"}`)
	tests := []struct {
		name   string
		caller authority.Caller
		id     contract.ConversationID
		save   contract.ConversationSave
		code   contract.Code
	}{
		{"a member", f.admin, "c1", contract.ConversationSave{Messages: msgs("a")}, contract.CodeForbidden},
		{"a bad id", ag, "../c", contract.ConversationSave{Messages: msgs("a")}, contract.CodeInvalidArgument},
		{"from without prev", ag, "c2", contract.ConversationSave{From: 1, Messages: msgs("a")}, contract.CodeInvalidArgument},
		{"from past the end", ag, "c1", contract.ConversationSave{Prev: h.Seq, From: 5, Messages: msgs("a")}, contract.CodeInvalidArgument},
		{"a message not an object", ag, "c1", contract.ConversationSave{Prev: h.Seq, From: 1, Messages: []json.RawMessage{json.RawMessage(`"text"`)}}, contract.CodeInvalidArgument},
		{"a state not an object", ag, "c1", contract.ConversationSave{Prev: h.Seq, From: 1, State: json.RawMessage(`[1]`)}, contract.CodeInvalidArgument},
		{"too large", ag, "c1", contract.ConversationSave{Prev: h.Seq, From: 1, Messages: []json.RawMessage{big}}, contract.CodeConversationTooLarge},
		{"prev of another agent's conversation", other, "c1", contract.ConversationSave{Prev: h.Seq, From: 1, Messages: msgs("b")}, contract.CodeInvalidArgument},
		{"prev not a save", ag, "c1", contract.ConversationSave{Prev: 1, Messages: msgs("b")}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.SaveConversation(ctx, tt.caller, tt.id, tt.save)
			wantCode(t, err, tt.code)
		})
	}
}

func TestAuthority_Conversations(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ag := newAgentCaller(t, f, "calc")
	h, err := f.a.SaveConversation(ctx, ag, "c1", contract.ConversationSave{Messages: msgs("a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	b := contract.BudgetExhausted{Scope: "conversation", Kind: "tokens", Limit: 100, Used: 120, Turns: 2, InputTokens: 100, OutputTokens: 20}
	if err := f.a.RecordBudgetExhausted(ctx, ag, "c1", b); err != nil {
		t.Fatal(err)
	}
	err = f.a.RecordBudgetExhausted(ctx, ag, "c1", contract.BudgetExhausted{Scope: "week", Kind: "tokens"})
	wantCode(t, err, contract.CodeInvalidArgument)

	list, err := f.a.Conversations(ctx, f.admin, "default", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.ConversationSummary{{ID: "c1", Agent: contract.AgentID(ag.ID), Seq: h.Seq, Messages: 2, Budgets: 1}}
	if diff := cmp.Diff(want, list, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".UpdatedAt" }, cmp.Ignore())); diff != "" {
		t.Errorf("Conversations (-want +got):\n%s", diff)
	}
	got, err := f.a.Conversation(ctx, f.admin, "default", ag.ID, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]contract.BudgetExhausted{b}, got.Budgets); diff != "" {
		t.Errorf("budgets (-want +got):\n%s", diff)
	}
	_, err = f.a.Conversations(ctx, ag, "default", "")
	wantCode(t, err, contract.CodeForbidden)
}
