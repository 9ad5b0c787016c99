package authority_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// markCall is the ops capability's Board-only Action that needs a person.
func markCall(topic string) *contract.ApplyActionInput {
	return &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue(topic)}}
}

// marked returns how many marked facts the Board holds.
func (f *opsFixture) marked(t *testing.T) int {
	t.Helper()
	n := 0
	err := f.a.View(t.Context(), "default", func(b *board.Board) error {
		got, err := b.Query(contract.Atom{Predicate: "marked"}, "", 10)
		n = len(got.Items)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pendingMark has the Agent ask to mark topic, having read the outcomes of the ordinals
// delivered, and returns the Request it raised.
func (f *opsFixture) pendingMark(t *testing.T, topic string, delivered ...int64) contract.Request {
	t.Helper()
	if ans := f.call(t, f.ops, markCall(topic), delivered...); state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("mark = %s %+v, want waiting_for_decision", ans.Result.ErrorCode, ans.Result.Operations)
	}
	rs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	return rs[len(rs)-1]
}

// TestDecide_AgentReplacedSinceRequest: a request made by an Agent that was revoked or had
// its token replaced since takes no decision — approving it once ran the write. It is
// listed expired.
func TestDecide_AgentReplacedSinceRequest(t *testing.T) {
	tests := []struct {
		name    string
		replace func(f *opsFixture) error
	}{
		{"revoked", func(f *opsFixture) error {
			_, err := f.a.Directory().RevokeAgent(t.Context(), f.admin, "default", "calc")
			return err
		}},
		{"token replaced", func(f *opsFixture) error {
			_, err := f.a.Directory().RotateAgentToken(t.Context(), f.admin, "default", "calc")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOpsFixture(t, time.Millisecond)
			req := f.pendingMark(t, "a")
			if err := tt.replace(f); err != nil {
				t.Fatal(err)
			}
			_, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove})
			wantCode(t, err, contract.CodeRequestClosed)
			if n := f.marked(t); n != 0 {
				t.Errorf("the approval of a replaced Agent's request ran the write: %d marked facts", n)
			}
			rs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
			if err != nil {
				t.Fatal(err)
			}
			if rs[0].State != contract.RequestExpired {
				t.Errorf("request after the decision = %s, want expired", rs[0].State)
			}
			if e := f.opState(t); e.State != contract.OpRefused {
				t.Errorf("operation after the refused decision = %+v, want refused", e)
			}
		})
	}
}

// TestOperations_SweepRequests: the sweep settles a request nobody decided before its
// deadline, and one whose Agent was re-tokened, with their Operations, so the Agent is
// no longer blocked by operation_running.
func TestOperations_SweepRequests(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	f.pendingMark(t, "a")
	if n, err := f.ops.Operations().SweepRequests(ctx); err != nil || n != 0 {
		t.Fatalf("SweepRequests before the deadline = %d, %v; want nothing settled", n, err)
	}
	ans := f.call(t, f.ops, markCall("b"))
	if ans.Result.ErrorCode != contract.CodeOperationRunning {
		t.Fatalf("a write while the request waits = %s, want operation_running", ans.Result.ErrorCode)
	}
	f.clock.Add(2 * time.Hour) // past the fixture's one-hour request TTL
	if n, err := f.ops.Operations().SweepRequests(ctx); err != nil || n != 1 {
		t.Fatalf("SweepRequests past the deadline = %d, %v; want one settled", n, err)
	}
	if e := f.opState(t); e.State != contract.OpRefused || e.Decision != "expired" {
		t.Errorf("operation after the sweep = %+v, want refused, expired", e)
	}
	if n, err := f.ops.Operations().SweepRequests(ctx); err != nil || n != 0 {
		t.Errorf("a second sweep = %d, %v; want nothing settled", n, err)
	}

	req := f.pendingMark(t, "b", 1) // admitted: the Agent is free again
	at, err := f.a.Directory().RotateAgentToken(ctx, f.admin, "default", "calc")
	if err != nil {
		t.Fatal(err)
	}
	if f.agent, err = f.a.Directory().Authenticate(ctx, identity.Token(at.Token)); err != nil {
		t.Fatal(err)
	}
	if n, err := f.ops.Operations().SweepRequests(ctx); err != nil || n != 1 {
		t.Fatalf("SweepRequests after the token was replaced = %d, %v; want one settled", n, err)
	}
	rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	if got := rs[len(rs)-1]; got.ID != req.ID || got.State != contract.RequestExpired {
		t.Errorf("request after the sweep = %s %s, want %s expired", got.ID, got.State, req.ID)
	}
	if ans := f.call(t, f.ops, markCall("c"), 2); state(ans) != contract.OpWaitingForDecision {
		t.Errorf("the new token's write = %s %+v, want admitted, waiting for a decision", ans.Result.ErrorCode, ans.Result.Operations)
	}
}
