package operation

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
