package operation

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
)

// unresolvedByScan is unresolvedLocked as it read an Agent's whole history: the
// reference its bounded read must agree with.
func unresolvedByScan(l *ledgerState, agent string) *operation {
	ops := l.ops[agent]
	for i := len(ops) - 1; i >= 0; i-- {
		if !ops[i].state.Settled() && ops[i].tool != hookTool && !asking(ops[i]) {
			return ops[i]
		}
	}
	return nil
}

// TestUnresolved_BoundedRead checks that unresolvedLocked, which reads an Agent's
// Operations back only as far as the oldest one still open, finds what reading the
// whole history finds, after each event of a history with settled calls, open hook
// calls, a docket.ask whose task runs and calls that wait for a decision.
func TestUnresolved_BoundedRead(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type step struct {
		e   func(ordinal int64) event.Payload
		ord int64 // 0: a new Operation's admission
	}
	admit := func(tool string, state contract.OperationState, stage contract.OperationStage) step {
		return step{e: func(o int64) event.Payload {
			return event.OpAdmittedData(event.Operation{Agent: "a", Ordinal: o, Tool: tool, State: state, Stage: stage})
		}}
	}
	change := func(ord int64, state contract.OperationState, stage contract.OperationStage) step {
		return step{ord: ord, e: func(o int64) event.Payload {
			return event.OpChangedData(event.Operation{Agent: "a", Ordinal: o, State: state, Stage: stage})
		}}
	}
	steps := []step{
		admit(contract.ToolApplyAction, contract.OpDone, ""),                             // 1
		admit(hookTool, contract.OpRunning, ""),                                          // 2: a hook call, open
		admit(contract.ToolApplyAction, contract.OpRunning, contract.StageNotDispatched), // 3: unresolved
		change(3, contract.OpDone, ""),
		admit(contract.ToolApplyAction, contract.OpRunning, contract.StageAsked), // 4: a docket.ask whose task runs
		admit(contract.ToolApplyAction, contract.OpWaitingForDecision, ""),       // 5: waits for a decision
		change(5, contract.OpRefused, ""),
		change(2, contract.OpDone, ""),
		admit(contract.ToolApplyAction, contract.OpNeedsPerson, ""), // 6
		change(4, contract.OpDone, ""),
		change(6, contract.OpFailed, ""),
		admit(contract.ToolApplyAction, contract.OpDone, ""), // 7
	}
	for range 50 { // a long settled history before the next open one
		steps = append(steps, admit(contract.ToolApplyAction, contract.OpDone, ""))
	}
	steps = append(steps, admit(contract.ToolApplyAction, contract.OpRunning, contract.StageAtWorker))
	l := newLedgerState()
	next := int64(1)
	for i, s := range steps {
		ord := s.ord
		if ord == 0 {
			ord, next = next, next+1
		}
		if err := l.Apply(eventlogtest.Event(t, "p", int64(i+1), "system", at, s.e(ord))); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got, want := l.unresolvedLocked("a"), unresolvedByScan(l, "a"); got != want {
			t.Fatalf("step %d: unresolvedLocked = %+v, reading the whole history finds %+v", i, got, want)
		}
	}
	if u := l.unresolvedLocked("a"); u == nil || u.ordinal != next-1 {
		t.Fatalf("unresolvedLocked at the end = %+v, want the last Operation", u)
	}
}

// BenchmarkUnresolved reads the unresolved Operation of an Agent with a long settled
// history, as the write gate does on every admission.
func BenchmarkUnresolved(b *testing.B) {
	l := newLedgerState()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for o := int64(1); o <= 2000; o++ {
		e := eventlogtest.Event(b, "p", o, "system", at,
			event.OpAdmittedData(event.Operation{Agent: "a", Ordinal: o, Tool: contract.ToolApplyAction, State: contract.OpDone}))
		if err := l.Apply(e); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if l.unresolvedLocked("a") != nil {
			b.Fatal("a settled history has no unresolved Operation")
		}
	}
}
