package task

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
)

// summary is what a test reads of a ledger: each task's state, attempt and cancel, and
// what the ledger keeps beside the tasks.
type summary struct {
	Tasks      map[contract.TaskID]string // state/attempt, "+cancel" when asked to end
	Wake       map[contract.TaskID]bool
	ClientKeys map[clientKey]contract.TaskID
	Known      map[convKey]bool
	Pins       map[convKey]string // Case Type, business key, Case
	Authors    map[convKey][]contract.Principal
	Ops        map[contract.AgentID]map[int64]opState
}

func summarize(l *ledger) summary {
	s := summary{Tasks: map[contract.TaskID]string{}, Wake: l.wake, ClientKeys: l.byClientKey, Known: l.known, Pins: map[convKey]string{}, Authors: l.authors, Ops: l.ops}
	for k, p := range l.pins {
		s.Pins[k] = p.CaseType + " " + p.BusinessKey.JSON() + " " + string(p.CaseID)
	}
	for _, id := range l.order {
		t := l.tasks[id]
		v := fmt.Sprintf("%s/%d", t.State, t.Attempt)
		if t.Cancel != nil {
			v += "+cancel"
		}
		s.Tasks[id] = v
	}
	return s
}

// TestLedger_Apply steps a fresh ledger by a log's events and reads what it holds: the
// State is the log's events applied in order, and nothing else.
func TestLedger_Apply(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	member := contract.NewPrincipal(contract.PrincipalMember, "ada")
	other := contract.NewPrincipal(contract.PrincipalMember, "bob")
	agent := contract.NewPrincipal(contract.PrincipalAgent, "calc")
	key := convKey{"calc", "c-1"}
	posted := func(id contract.TaskID, by contract.Principal, ck string, pin contract.CasePin) event.Payload {
		return event.TaskPostedData{Task: contract.Task{ID: id, Project: "default", Agent: "calc", Kind: contract.TaskKindTask, Text: "x",
			Conversation: "c-1", CasePin: pin, ClientKey: ck, PostedBy: by, PostedAt: at, State: contract.TaskQueued, UpdatedAt: at}}
	}
	pin := contract.CasePin{CaseType: "job", BusinessKey: contract.Args{"id": contract.StringValue("j-1")}}
	type step struct {
		by contract.Principal
		p  event.Payload
	}
	tests := []struct {
		name    string
		log     []step
		want    summary
		wantErr bool
	}{
		{name: "empty", want: summary{Tasks: map[contract.TaskID]string{}, Wake: map[contract.TaskID]bool{}, ClientKeys: map[clientKey]contract.TaskID{},
			Known: map[convKey]bool{}, Pins: map[convKey]string{}, Authors: map[convKey][]contract.Principal{}, Ops: map[contract.AgentID]map[int64]opState{}}},
		{name: "posted twice to one conversation, pinned once", log: []step{
			{member, posted("t-1", member, "k-1", contract.CasePin{})},
			{other, posted("t-2", other, "", pin)},
			{member, posted("t-3", member, "", contract.CasePin{CaseID: "case-1"})},
		}, want: summary{Tasks: map[contract.TaskID]string{"t-1": "queued/0", "t-2": "queued/0", "t-3": "queued/0"}, Wake: map[contract.TaskID]bool{},
			ClientKeys: map[clientKey]contract.TaskID{{"calc", "k-1"}: "t-1"}, Known: map[convKey]bool{key: true},
			Pins:    map[convKey]string{key: `job {"id":"j-1"} case-1`},
			Authors: map[convKey][]contract.Principal{key: {member, other}}, Ops: map[contract.AgentID]map[int64]opState{}}},
		{name: "claimed, reported waiting, claimed again on a wake, asked to end", log: []step{
			{member, posted("t-1", member, "", contract.CasePin{})},
			{agent, event.TaskClaimedData{Task: "t-1", Attempt: 1, LeaseUntil: at.Add(time.Minute)}},
			{agent, event.TaskReportedData{Task: "t-1", TaskReport: contract.TaskReport{Attempt: 1, State: contract.TaskWaiting,
				Waiting: []contract.TaskWait{{Tool: "ApplyAction", Ordinal: 1}}, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}}}},
			{agent, event.TaskClaimedData{Task: "t-1", Attempt: 2, LeaseUntil: at.Add(time.Minute), Wake: true}},
			{member, event.TaskCancelRequestedData{Task: "t-1", TaskCancel: contract.TaskCancel{By: member, At: at}}},
		}, want: summary{Tasks: map[contract.TaskID]string{"t-1": "claimed/2+cancel"}, Wake: map[contract.TaskID]bool{"t-1": true},
			ClientKeys: map[clientKey]contract.TaskID{}, Known: map[convKey]bool{key: true}, Pins: map[convKey]string{},
			Authors: map[convKey][]contract.Principal{key: {member}}, Ops: map[contract.AgentID]map[int64]opState{}}},
		{name: "Operations and saved conversations", log: []step{
			{agent, event.OpAdmittedData{Agent: "calc", Ordinal: 1, Tool: "ApplyAction", State: contract.OpRunning}},
			{agent, event.OpChangedData{Agent: "calc", Ordinal: 1, State: contract.OpDone}},
			{agent, event.ConversationSavedData{Conversation: "c-2"}},
			{member, event.ConversationSavedData{Conversation: "c-3"}}, // a member's is no Agent's conversation
		}, want: summary{Tasks: map[contract.TaskID]string{}, Wake: map[contract.TaskID]bool{}, ClientKeys: map[clientKey]contract.TaskID{},
			Known: map[convKey]bool{{"calc", "c-2"}: true}, Pins: map[convKey]string{}, Authors: map[convKey][]contract.Principal{},
			Ops: map[contract.AgentID]map[int64]opState{"calc": {1: {tool: "ApplyAction", state: contract.OpDone}}}}},
		{name: "a claim of a task never posted", log: []step{
			{agent, event.TaskClaimedData{Task: "t-9", Attempt: 1, LeaseUntil: at}},
		}, wantErr: true},
		{name: "a cancel of a task never posted", log: []step{
			{member, event.TaskCancelRequestedData{Task: "t-9", TaskCancel: contract.TaskCancel{By: member, At: at}}},
		}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			var err error
			for i, s := range tt.log {
				if err = l.Apply(eventlogtest.Event(t, "default", int64(i+1), s.by, at, s.p)); err != nil {
					break
				}
			}
			if tt.wantErr {
				if err == nil {
					t.Fatal("Apply = nil, want the event refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summarize(l), cmp.AllowUnexported(clientKey{}, convKey{}, opState{})); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLedger_Next checks that a task waiting on a budget is next only when the rooms read
// for the call say the budget has room: the ledger keeps no room of its own.
func TestLedger_Next(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	l := newLedger()
	waiting := contract.Task{ID: "t-1", Agent: "calc", Conversation: "c-1", State: contract.TaskWaiting,
		Waiting: []contract.TaskWait{{Budget: "daily"}}}
	l.tasks["t-1"], l.order = &waiting, []contract.TaskID{"t-1"}
	tests := []struct {
		name string
		rs   rooms
		want bool
	}{
		{"no rooms read", nil, false},
		{"no room", rooms{"daily": false}, false},
		{"room", rooms{"daily": true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, wake, _ := l.next("calc", "", at, tt.rs)
			if (got != nil) != tt.want || (got != nil && !wake) {
				t.Errorf("next(rooms %v) = %v, wake %v; want a task %v, woken", tt.rs, got, wake, tt.want)
			}
		})
	}
}
