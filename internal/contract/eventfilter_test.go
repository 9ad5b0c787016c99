package contract_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

func TestEventFilter_Match(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	ev := func(typ, actor, data string) contract.Event {
		return contract.Event{Type: typ, Actor: actor, At: at, Data: json.RawMessage(data)}
	}
	tests := []struct {
		name string
		f    contract.EventFilter
		e    contract.Event
		want bool
	}{
		{"no filter selects everything", contract.EventFilter{}, ev(event.ProjectCreated, "member:m", `"x"`), true},
		{"a listed type", contract.EventFilter{Types: []string{event.CaseOpened, event.CaseClosed}}, ev(event.CaseClosed, "agent:a", `{}`), true},
		{"another type", contract.EventFilter{Types: []string{event.CaseOpened}}, ev(event.CaseClosed, "agent:a", `{}`), false},
		{"the Case at the top", contract.EventFilter{Case: "case-1"}, ev(event.CaseClosed, "agent:a", `{"caseId":"case-1"}`), true},
		{"the Case under execution", contract.EventFilter{Case: "case-1"}, ev(event.OpChanged, "tool:t", `{"execution":{"caseId":"case-1"}}`), true},
		{"the Case under input", contract.EventFilter{Case: "case-1"}, ev(event.OpAdmitted, "agent:a", `{"input":{"caseId":"case-1"}}`), true},
		{"another Case", contract.EventFilter{Case: "case-1"}, ev(event.CaseClosed, "agent:a", `{"caseId":"case-2"}`), false},
		{"no Case named", contract.EventFilter{Case: "case-1"}, ev(event.ProjectCreated, "member:m", `{"id":"default"}`), false},
		{"data that is not an object names nothing", contract.EventFilter{Case: "case-1"}, ev("x", "member:m", `"case-1"`), false},
		{"the Agent in the data", contract.EventFilter{Agent: "agt_1"}, ev(event.OpChanged, "tool:t", `{"agent":"agt_1"}`), true},
		{"the Agent as the actor", contract.EventFilter{Agent: "agt_1"}, ev(event.CaseOpened, "agent:agt_1", `{"caseId":"case-1"}`), true},
		{"another Agent", contract.EventFilter{Agent: "agt_1"}, ev(event.CaseOpened, "agent:agt_2", `{"agent":"agt_2"}`), false},
		{"at the since time", contract.EventFilter{Since: at}, ev("x", "m", `{}`), true},
		{"before the since time", contract.EventFilter{Since: at.Add(time.Second)}, ev("x", "m", `{}`), false},
		{"every filter must match", contract.EventFilter{Types: []string{event.CaseOpened}, Case: "case-1", Agent: "agt_1"},
			ev(event.CaseOpened, "agent:agt_2", `{"caseId":"case-1"}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Match(tt.e); got != tt.want {
				t.Errorf("%+v.Match(%s %s %s) = %v, want %v", tt.f, tt.e.Type, tt.e.Actor, tt.e.Data, got, tt.want)
			}
		})
	}
}

func TestWaitOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state contract.OperationState
		stage contract.OperationStage
		want  contract.OperationWait
	}{
		{contract.OpRunning, contract.StageNotDispatched, contract.WaitDispatch},
		{contract.OpRunning, contract.StageAtWorker, contract.WaitWorker},
		{contract.OpRunning, "", contract.WaitNothing},
		{contract.OpWaitingForDecision, "", contract.WaitDecider},
		{contract.OpNeedsPerson, "", contract.WaitPerson},
		{contract.OpDone, "", contract.WaitNothing},
	}
	for _, tt := range tests {
		if got := contract.WaitOf(tt.state, tt.stage); got != tt.want {
			t.Errorf("WaitOf(%s, %s) = %q, want %q", tt.state, tt.stage, got, tt.want)
		}
	}
}
