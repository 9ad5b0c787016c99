package conversation

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
)

// TestIndex_Apply steps a fresh index by a log's events and reads what it holds: which
// events are whose conversation, and the saves of the last hour the bounds count.
func TestIndex_Apply(t *testing.T) {
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	agent := string(contract.NewPrincipal(contract.PrincipalAgent, "calc"))
	member := string(contract.NewPrincipal(contract.PrincipalMember, "ada"))
	type step struct {
		actor string
		min   int // minutes after start
		p     event.Payload
	}
	saved := func(id contract.ConversationID, prev int64, count int) event.Payload {
		return event.ConversationSavedData{Conversation: id, Prev: prev, Count: count}
	}
	c1 := conversationKey{agent, "c-1"}
	tests := []struct {
		name  string
		log   []step
		want  map[conversationKey]conversationEntry
		marks map[string][]string // by actor: "<minute> fresh|more"
	}{
		{name: "empty", want: map[conversationKey]conversationEntry{}, marks: map[string][]string{}},
		{name: "saves, a budget and a compaction", log: []step{
			{agent, 0, saved("c-1", 0, 2)},
			{agent, 1, event.ConversationBudgetExhaustedData{Conversation: "c-1", BudgetExhausted: contract.BudgetExhausted{Scope: "run", Kind: "turns"}}},
			{agent, 2, saved("c-1", 1, 3)},
			{agent, 3, event.ConversationCompactedData{Conversation: "c-1", Digest: "00", Messages: 1}},
			{member, 4, event.TaskCancelRequestedData{Task: "t-1"}}, // no conversation's
		}, want: map[conversationKey]conversationEntry{c1: {saves: []int64{1, 3}, budgets: []int64{2}, compactions: []int64{4},
			seq: 3, at: start.Add(2 * time.Minute), count: 3}},
			marks: map[string][]string{agent: {"0 fresh", "2 more"}}},
		{name: "a save with prev 0 starts anew and is no new conversation", log: []step{
			{agent, 0, saved("c-1", 0, 2)},
			{agent, 1, saved("c-1", 1, 3)},
			{agent, 2, saved("c-1", 0, 1)},
		}, want: map[conversationKey]conversationEntry{c1: {saves: []int64{3}, seq: 3, at: start.Add(2 * time.Minute), count: 1}},
			marks: map[string][]string{agent: {"0 fresh", "1 more", "2 more"}}},
		{name: "a budget before any save", log: []step{
			{agent, 0, event.ConversationBudgetExhaustedData{Conversation: "c-1"}},
		}, want: map[conversationKey]conversationEntry{c1: {budgets: []int64{1}}}, marks: map[string][]string{}},
		{name: "saves an hour older are forgotten", log: []step{
			{agent, 0, saved("c-1", 0, 1)},
			{agent, 30, saved("c-2", 0, 1)},
			{agent, 61, saved("c-1", 1, 2)},
		}, want: map[conversationKey]conversationEntry{
			c1:             {saves: []int64{1, 3}, seq: 3, at: start.Add(61 * time.Minute), count: 2},
			{agent, "c-2"}: {saves: []int64{2}, seq: 2, at: start.Add(30 * time.Minute), count: 1}},
			marks: map[string][]string{agent: {"30 fresh", "61 more"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newIndex()
			for i, s := range tt.log {
				e := eventlogtest.Event(t, "default", int64(i+1), contract.Principal(s.actor), start.Add(time.Duration(s.min)*time.Minute), s.p)
				if err := x.Apply(e); err != nil {
					t.Fatal(err)
				}
			}
			got := map[conversationKey]conversationEntry{}
			for k, e := range x.convs {
				got[k] = *e
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(conversationKey{}, conversationEntry{})); diff != "" {
				t.Errorf("conversations (-want +got):\n%s", diff)
			}
			marks := map[string][]string{}
			for actor, ms := range x.recent {
				for _, m := range ms {
					if m.bytes <= 0 {
						t.Errorf("a mark of %s counts %d bytes, want the save's size", actor, m.bytes)
					}
					kind := "more"
					if m.fresh {
						kind = "fresh"
					}
					marks[actor] = append(marks[actor], fmt.Sprintf("%d %s", int(m.at.Sub(start).Minutes()), kind))
				}
			}
			if diff := cmp.Diff(tt.marks, marks); diff != "" {
				t.Errorf("saves of the last hour (-want +got):\n%s", diff)
			}
		})
	}
}
