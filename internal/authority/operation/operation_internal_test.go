package operation

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
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
			for _, op := range tt.ops {
				if !op.state.Settled() {
					l.open["a"]++ // as applying their events counts them
				}
			}
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

// TestLedger_WakeFor: each event the State applies wakes the calls held on the Operation
// it moves, every Operation of an Agent whose credentials it ends, and nothing for an
// event of neither.
func TestLedger_WakeFor(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a1, a2, b1 := holdKey{"a", 1}, holdKey{"a", 2}, holdKey{"b", 1}
	tests := []struct {
		name string
		ps   []event.Payload
		want []holdKey // the holds woken, of a1, a2 and b1
	}{
		{"nothing applied", nil, nil},
		{"an admission", []event.Payload{event.OpAdmittedData(event.Operation{Agent: "a", Ordinal: 2, Tool: "ApplyBatch", State: contract.OpRunning})}, []holdKey{a2}},
		{"an Operation no call holds", []event.Payload{event.OpChangedData(event.Operation{Agent: "c", Ordinal: 1, State: contract.OpDone})}, nil},
		{"a revocation: every Operation of the Agent", []event.Payload{event.AgentRevokedData{ID: "a"}}, []holdKey{a1, a2}},
		{"a token replaced", []event.Payload{event.AgentTokenReplacedData{ID: "b"}}, []holdKey{b1}},
		{"several", []event.Payload{
			event.OpChangedData(event.Operation{Agent: "b", Ordinal: 1, State: contract.OpDone}),
			event.OpAcknowledgedData(event.Operation{Agent: "a", Ordinal: 1}),
			event.OpWaitingData(event.Operation{Agent: "b", Ordinal: 1, Reason: "no worker"}),
		}, []holdKey{a1, b1}},
		{"neither", []event.Payload{event.LeaseAcquiredData{Connection: "c", WorkerID: "w", Generation: 1, ExpiresAt: at}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{ledgerState: newLedgerState(), holds: map[holdKey]*holdWake{}}
			chans := map[holdKey]chan struct{}{}
			for _, k := range []holdKey{a1, a2, b1} {
				w := &holdWake{ch: make(chan struct{}), n: 1}
				l.holds[k], chans[k] = w, w.ch
			}
			for i, p := range tt.ps {
				l.wakeFor(nil, eventlogtest.Event(t, "p", int64(i+1), "system", at, p))
			}
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
		})
	}
}

// TestLedger_WakeForFromApply checks that the calls held on what an event moved are
// woken from what the State's Apply decoded, without decoding the event again: each
// event's data is spoiled once it applied, and a decode of it would wake every call.
func TestLedger_WakeForFromApply(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a1, a2, b1 := holdKey{"a", 1}, holdKey{"a", 2}, holdKey{"b", 1}
	admit := func(agent string, ordinal int64) event.Payload {
		return event.OpAdmittedData(event.Operation{Agent: agent, Ordinal: ordinal, Tool: "ApplyBatch", State: contract.OpRunning})
	}
	steps := []struct {
		p    event.Payload
		want []holdKey
	}{
		{admit("a", 1), []holdKey{a1}},
		{admit("b", 1), []holdKey{b1}},
		{admit("a", 2), []holdKey{a2}},
		{event.OpChangedData(event.Operation{Agent: "b", Ordinal: 1, State: contract.OpDone}), []holdKey{b1}},
		{event.OpWaitingData(event.Operation{Agent: "a", Ordinal: 2, Reason: "no worker"}), []holdKey{a2}},
		{event.LeaseAcquiredData{Connection: "c", WorkerID: "w", Generation: 1, ExpiresAt: at}, nil},
		{event.AgentRevokedData{ID: "a"}, []holdKey{a1, a2}},
	}
	l := &ledger{ledgerState: newLedgerState(), holds: map[holdKey]*holdWake{}}
	for _, k := range []holdKey{a1, a2, b1} {
		l.holds[k] = &holdWake{ch: make(chan struct{}), n: 1}
	}
	for i, step := range steps {
		e := eventlogtest.Event(t, "p", int64(i+1), "system", at, step.p)
		if err := l.ledgerState.Apply(e); err != nil {
			t.Fatalf("step %d: Apply: %v", i, err)
		}
		chans := map[holdKey]chan struct{}{}
		for k, w := range l.holds {
			chans[k] = w.ch
		}
		e.Data = []byte(`not JSON`)
		l.wakeFor(l.ledgerState, e)
		var got []holdKey
		for _, k := range []holdKey{a1, a2, b1} {
			select {
			case <-chans[k]:
				got = append(got, k)
			default:
			}
		}
		if diff := cmp.Diff(step.want, got, cmp.AllowUnexported(holdKey{})); diff != "" {
			t.Errorf("step %d (%s): woken (-want +got):\n%s", i, e.Type, diff)
		}
	}
}

// TestOperations_WakesOnApply checks that the Operations' driver notifies the ledger as
// a catch-up applies: a call held on an Operation is woken by the catch-up that applies
// its change, whoever committed it, without the State keeping what moved.
func TestOperations_WakesOnApply(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const project = contract.ProjectID("p")
	at := time.Now().UTC()
	if err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateProject(ctx, store.Project{ID: string(project), Name: "p", CreatedAt: at}); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, "system", at, event.OpAdmittedData(event.Operation{Agent: "a", Ordinal: 1, Tool: "ApplyBatch", State: contract.OpRunning}))
	}); err != nil {
		t.Fatal(err)
	}
	o := New(Deps{Store: eventlog.Remember(st, nil)}, Config{})
	t.Cleanup(o.Close)
	l := o.ledger(project)
	l.lock()
	w := &holdWake{ch: make(chan struct{}), n: 1}
	l.holds = map[holdKey]*holdWake{{"a", 1}: w}
	woken := w.ch
	err = l.catchUpLocked(ctx, o.store)
	l.unlock()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	default:
		t.Fatal("the catch-up that applied the admission did not wake the call held on it")
	}
	// Another instance settles it.
	if err := st.Update(ctx, func(tx store.Tx) error {
		return eventlog.Append(ctx, tx, project, "system", at, event.OpChangedData(event.Operation{Agent: "a", Ordinal: 1, State: contract.OpDone}))
	}); err != nil {
		t.Fatal(err)
	}
	l.lock()
	woken = w.ch
	err = l.catchUpLocked(ctx, o.store)
	state := l.opLocked("a", 1).state
	l.unlock()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	default:
		t.Fatal("the catch-up that applied the settlement did not wake the call held on it")
	}
	if state != contract.OpDone {
		t.Errorf("the ledger holds the Operation %s, want %s", state, contract.OpDone)
	}
}
