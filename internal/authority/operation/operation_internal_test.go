package operation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
)

func TestLedger_Strip(t *testing.T) {
	// ops builds an agent's Operations from their states, ordinal 1 first.
	ops := func(states ...contract.OperationState) []*operation {
		var out []*operation
		for i, s := range states {
			out = append(out, &operation{ordinal: int64(i + 1), tool: "ApplyBatch", label: "ApplyBatch", state: s})
		}
		return out
	}
	const (
		done    = contract.OpDone
		running = contract.OpRunning
		waiting = contract.OpWaitingForDecision
		person  = contract.OpNeedsPerson
	)
	tests := []struct {
		name string
		ops  []*operation
		want []int64
	}{
		{"none", nil, nil},
		{"fewer than five", ops(done, done), []int64{2, 1}},
		{"latest five", ops(done, done, done, done, done, done, done, done), []int64{8, 7, 6, 5, 4}},
		{"an old unresolved one", ops(done, person, done, done, done, done, done), []int64{7, 6, 5, 4, 3, 2}},
		{"latest settled behind five unresolved", ops(done, running, waiting, person, running, waiting), []int64{6, 5, 4, 3, 2, 1}},
		{"bounded at seven", ops(done, person, person, person, person, person, person, person, person), []int64{9, 8, 7, 6, 5, 4, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedgerState()
			l.ops["a"] = tt.ops
			var got []int64
			for _, s := range l.stripLocked("a") {
				got = append(got, s.Ordinal)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("strip ordinals (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOperation_Entry(t *testing.T) {
	op := &operation{ordinal: 1, tool: "ApplyAction", label: "ApplyAction note", state: contract.OpDone, result: []byte(`{"changes":1}`)}
	if e := op.entry(); string(e.Result) != `{"changes":1}` || e.Summary != "" {
		t.Errorf("unacknowledged entry = %+v, want the result in full", e)
	}
	op.acked = true
	if e := op.entry(); e.Result != nil || e.Summary != "ApplyAction note done" {
		t.Errorf("acknowledged entry = %+v, want a summary", e)
	}
	op = &operation{ordinal: 2, state: contract.OpRunning, stage: contract.StageNotDispatched, result: []byte(`{}`)}
	if e := op.entry(); e.Result != nil || e.Stage != contract.StageNotDispatched {
		t.Errorf("running entry = %+v, want a stage and no result", e)
	}
}

func TestLedger_WakeMoved(t *testing.T) {
	a1, a2, b1 := holdKey{"a", 1}, holdKey{"a", 2}, holdKey{"b", 1}
	tests := []struct {
		name  string
		moved []holdKey
		want  []holdKey // the holds woken, of a1, a2 and b1
	}{
		{"nothing applied", nil, nil},
		{"one Operation", []holdKey{a2}, []holdKey{a2}},
		{"an Operation no call holds", []holdKey{{"c", 1}}, nil},
		{"every Operation of an Agent (a revocation)", []holdKey{{"a", 0}}, []holdKey{a1, a2}},
		{"several", []holdKey{b1, a1, b1}, []holdKey{a1, b1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{ledgerState: newLedgerState(), holds: map[holdKey]*holdWake{}}
			chans := map[holdKey]chan struct{}{}
			for _, k := range []holdKey{a1, a2, b1} {
				w := &holdWake{ch: make(chan struct{}), n: 1}
				l.holds[k], chans[k] = w, w.ch
			}
			l.moved = append(l.moved, tt.moved...)
			l.wakeMoved()
			var got []holdKey
			for _, k := range []holdKey{a1, a2, b1} {
				select {
				case <-chans[k]:
					got = append(got, k)
				default:
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(holdKey{})); diff != "" {
				t.Errorf("woken (-want +got):\n%s", diff)
			}
			if len(l.moved) != 0 {
				t.Errorf("moved = %v after the wake, want it empty", l.moved)
			}
		})
	}
}

// TestLedgerState_ApplyNamesMoved: the State names each Operation an event moved, and
// every Operation of an Agent whose credentials ended, for the ledger to wake the calls
// held on them; an event of neither names nothing.
func TestLedgerState_ApplyNamesMoved(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	admitted := event.OpAdmittedData(event.Operation{Agent: "a", Ordinal: 1, Tool: "ApplyBatch", State: contract.OpRunning})
	tests := []struct {
		name string
		ps   []event.Payload
		want []holdKey
	}{
		{"an admission", []event.Payload{admitted}, []holdKey{{"a", 1}}},
		{"an admission, then a change", []event.Payload{admitted,
			event.OpChangedData(event.Operation{Agent: "a", Ordinal: 1, State: contract.OpDone})}, []holdKey{{"a", 1}, {"a", 1}}},
		{"a revocation", []event.Payload{event.AgentRevokedData{ID: "a"}}, []holdKey{{"a", 0}}},
		{"a token replaced", []event.Payload{event.AgentTokenReplacedData{ID: "b"}}, []holdKey{{"b", 0}}},
		{"neither", []event.Payload{event.LeaseAcquiredData{Connection: "c", WorkerID: "w", Generation: 1, ExpiresAt: at}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newLedgerState()
			for i, p := range tt.ps {
				e := eventlogtest.Event(t, "p", int64(i+1), "system", at, p)
				if err := s.Apply(e); err != nil {
					t.Fatalf("apply %s: %v", e.Type, err)
				}
			}
			if diff := cmp.Diff(tt.want, s.moved, cmp.AllowUnexported(holdKey{})); diff != "" {
				t.Errorf("moved (-want +got):\n%s", diff)
			}
		})
	}
}
