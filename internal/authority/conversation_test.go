package authority_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// newAgentCaller creates Agent name in project default and returns it as a caller.
func newAgentCaller(t *testing.T, f *fixture, name string) identity.Caller {
	t.Helper()
	at, err := f.a.Directory().CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
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
	if want := fmt.Sprintf("(event %d) after event %d", h2.Seq, h1.Seq); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the conflict = %v, want it to name the save that came after prev: %q", err, want)
	}

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
		caller identity.Caller
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

// countingStore is a store that counts the events its Events calls return.
type countingStore struct {
	store.Store
	calls, events int
}

func (s *countingStore) Events(ctx context.Context, project string, after int64, limit int) ([]store.Event, error) {
	es, err := s.Store.Events(ctx, project, after, limit)
	s.calls++
	s.events += len(es)
	return es, err
}

// appendNoise appends n events of project "default" that are no conversation's.
func appendNoise(t *testing.T, f *fixture, n int) {
	t.Helper()
	err := f.st.Update(t.Context(), func(tx store.Tx) error {
		for i := range n {
			_, err := tx.Append(t.Context(), store.NewEvent{Project: "default", Type: "test.noise", At: time.Unix(0, 0).UTC(),
				Actor: "system", Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A second authority over the same store knows conversations only from the log: it sees
// saves made through the first, reads only a conversation's own events to load it, and
// keeps what a save with prev 0 dropped out of the load.
func TestAuthority_ConversationFromTheLog(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	counted := &countingStore{Store: f.st}
	other := authoritytest.Bare(t, authoritytest.Options{Store: counted, Key: f.key})
	ag := newAgentCaller(t, f, "calc")
	peer := newAgentCaller(t, f, "peer")
	save := func(c identity.Caller, h contract.ConversationHead, from int, texts ...string) contract.ConversationHead {
		t.Helper()
		h, err := f.a.SaveConversation(ctx, c, "c1", contract.ConversationSave{Prev: h.Seq, From: from, Messages: msgs(texts...)})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	budget := contract.BudgetExhausted{Scope: "run", Kind: "turns", Limit: 3, Used: 3, Turns: 3}

	h := save(ag, contract.ConversationHead{}, 0, "task")
	appendNoise(t, f, 3)
	if err := f.a.RecordBudgetExhausted(ctx, ag, "c1", budget); err != nil {
		t.Fatal(err)
	}
	h = save(ag, h, 1, "a", "b")
	appendNoise(t, f, authority.MaxEventPage+100) // more than one page between two saves
	save(ag, h, 2, "c")
	got, err := other.OwnConversation(ctx, ag, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"task", "a", "c"}, texts(t, got.Messages)); diff != "" {
		t.Errorf("messages before the restart (-want +got):\n%s", diff)
	}

	appendNoise(t, f, 20)
	save(peer, contract.ConversationHead{}, 0, "x")
	h = save(ag, contract.ConversationHead{}, 0, "fresh", "y") // starts c1 anew
	if err := f.a.RecordBudgetExhausted(ctx, ag, "c1", budget); err != nil {
		t.Fatal(err)
	}
	h = save(ag, h, 2, "z")
	if err := f.a.RecordBudgetExhausted(ctx, peer, "c9", budget); err != nil { // a budget, no save
		t.Fatal(err)
	}

	list, err := other.Conversations(ctx, f.admin, "default", "")
	if err != nil {
		t.Fatal(err)
	}
	var gotList []string
	for _, s := range list {
		gotList = append(gotList, fmt.Sprintf("%s/%s seq>0:%v messages:%d budgets:%d", s.Agent, s.ID, s.Seq > 0, s.Messages, s.Budgets))
	}
	want := []string{
		fmt.Sprintf("%s/c1 seq>0:true messages:3 budgets:2", ag.ID),
		fmt.Sprintf("%s/c1 seq>0:true messages:1 budgets:0", peer.ID),
		fmt.Sprintf("%s/c9 seq>0:false messages:0 budgets:1", peer.ID),
	}
	if ag.ID > peer.ID {
		want[0], want[1], want[2] = want[1], want[2], want[0]
	}
	if diff := cmp.Diff(want, gotList); diff != "" {
		t.Errorf("Conversations (-want +got):\n%s", diff)
	}
	byAgent, err := other.Conversations(ctx, f.admin, "default", "peer")
	if err != nil || len(byAgent) != 2 || byAgent[0].Agent != contract.AgentID(peer.ID) {
		t.Errorf("Conversations of peer = %+v, %v; want its c1 and c9", byAgent, err)
	}

	counted.calls, counted.events = 0, 0
	got, err = other.Conversation(ctx, f.admin, "default", "calc", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"fresh", "y", "z"}, texts(t, got.Messages)); diff != "" {
		t.Errorf("messages after the restart (-want +got):\n%s", diff)
	}
	if got.Seq != h.Seq || len(got.Budgets) != 2 {
		t.Errorf("conversation = seq %d, %d budgets; want seq %d, 2 budgets", got.Seq, len(got.Budgets), h.Seq)
	}
	// The three events since the restart are adjacent, two budgets lie apart; the log
	// holds over 600 others, none of which the load needs.
	if counted.events > 10 {
		t.Errorf("the load read %d events in %d calls; want at most 10", counted.events, counted.calls)
	}
	peerConv, err := other.Conversation(ctx, f.admin, "default", "peer", "c1")
	if err != nil || !cmp.Equal([]string{"x"}, texts(t, peerConv.Messages)) {
		t.Errorf("peer's c1 = %v, %v; want [x]", texts(t, peerConv.Messages), err)
	}
	_, err = other.Conversation(ctx, f.admin, "default", "peer", "c9")
	wantCode(t, err, contract.CodeNotFound)
}
