package operation_test

import (
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestDecide_StoreRefusesSelfDecision bypasses the domain check: the store's constraint
// alone refuses a principal deciding its own request.
func TestDecide_StoreRefusesSelfDecision(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: authority.Key{5}, Capability: "testdata/self", Agent: "calc"})
	a, admin, agent := p.A, p.Admin, p.Agent
	o := authority.NewOperations(a, authority.OperationsConfig{})
	in := &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("a")}}
	if _, err := o.Call(ctx, agent, authority.Call{Tool: contract.ToolApplyAction, Input: in}); err != nil {
		t.Fatal(err)
	}
	rs, err := o.Requests(ctx, admin, "default")
	if err != nil || len(rs) != 1 {
		t.Fatal(rs, err)
	}
	d := contract.Decision{Digest: rs[0].Digest, Verdict: contract.VerdictApprove}

	_, err = o.DecideAs(ctx, agent.Principal(), "default", rs[0].ID, d, true)
	if contract.CodeOf(err) != contract.CodeSelfDecision {
		t.Errorf("domain check: decide by the requester = %v, want self_decision", err)
	}
	_, err = o.DecideAs(ctx, agent.Principal(), "default", rs[0].ID, d, false)
	if contract.CodeOf(err) != contract.CodeSelfDecision {
		t.Fatalf("store check alone: decide by the requester = %v, want self_decision", err)
	}
	rs, _ = o.Requests(ctx, admin, "default")
	st2, _ := o.State(ctx, agent)
	if rs[0].State != contract.RequestPending || st2.State[0].State != contract.OpWaitingForDecision {
		t.Errorf("after the refused decision: request %s, operation %s; want pending and waiting", rs[0].State, st2.State[0].State)
	}
	if _, err := o.Decide(ctx, admin, "default", rs[0].ID, d); err != nil {
		t.Errorf("a member's decision after the refusal = %v", err)
	}
}
