package authority_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// TestOperations_OperationList: a person's list says what each Operation waits for and
// names its Agent and work id; --waiting keeps only those that wait.
func TestOperations_OperationList(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		state   contract.OperationState
		waiting contract.OperationWait
	}{
		{"a Board-only Action waits for a decision", &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("a")}},
			contract.OpWaitingForDecision, contract.WaitDecider},
		{"an executed Action waits for dispatch", &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a")}},
			contract.OpRunning, contract.WaitDispatch},
		{"a batch settles and waits for nothing", &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
			Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue("1")}}}}},
			contract.OpDone, contract.WaitNothing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOpsFixture(t, time.Millisecond)
			f.call(t, f.ops, tt.in)
			all, err := f.ops.OperationList(t.Context(), f.admin, "default", "calc", false)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 1 {
				t.Fatalf("OperationList = %+v, want one Operation", all)
			}
			op := all[0]
			got := []any{op.AgentName, op.Work, op.State, op.Waiting}
			want := []any{"calc", f.agent.ID + ".1", tt.state, tt.waiting}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("operation (-want +got):\n%s", diff)
			}
			if tt.waiting == contract.WaitDecider && op.Decision == "" {
				t.Errorf("an Operation waiting for a decision names no Request: %+v", op)
			}
			waiting, err := f.ops.OperationList(t.Context(), f.admin, "default", "", true)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.waiting != contract.WaitNothing; (len(waiting) == 1) != want {
				t.Errorf("waiting list = %+v, want it to hold the Operation: %v", waiting, want)
			}
		})
	}
	t.Run("an unknown Agent", func(t *testing.T) {
		f := newOpsFixture(t, time.Millisecond)
		_, err := f.ops.OperationList(t.Context(), f.admin, "default", "nobody", false)
		wantCode(t, err, contract.CodeNotFound)
	})
	t.Run("an Agent may not list", func(t *testing.T) {
		f := newOpsFixture(t, time.Millisecond)
		_, err := f.ops.OperationList(t.Context(), f.agent, "default", "", false)
		wantCode(t, err, contract.CodeForbidden)
	})
}
