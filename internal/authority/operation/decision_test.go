package operation_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestDecide_StoreRefusesSelfDecision bypasses the domain check: the store's constraint
// alone refuses a principal deciding its own request (DESIGN.md §7.1).
func TestDecide_StoreRefusesSelfDecision(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := authority.New(authority.Config{Store: st, Key: authority.Key{5}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Init(ctx, "ada", "correct horse battery", "default")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := a.Authenticate(ctx, b.Token)
	if err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(filepath.Join("testdata", "self", "capability.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.InstallCapability(ctx, admin, "default", contract.CapabilityUpload{Files: map[string]string{"capability.toml": string(toml)}}); err != nil {
		t.Fatal(err)
	}
	at, err := a.CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := a.Authenticate(ctx, authority.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
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
