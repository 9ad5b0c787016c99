package authority_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// docsDelegation lets an orchestrator decide notes of paths under docs/.
const docsDelegation = `[delegation_policy]
[[delegation_policy.class]]
name   = "docs notes"
action = "note"
path   = "docs/*"
`

// orchFixture is a project with the delegate capability, the Agent calc and the
// orchestrator boss.
type orchFixture struct {
	a          *authority.Authority
	ops        *authority.Operations
	admin      identity.Caller
	calc, boss identity.Caller
}

func newOrchFixture(t *testing.T) *orchFixture {
	t.Helper()
	return orchFixtureOver(t, openSQLite(t, filepath.Join(t.TempDir(), "docket.db")))
}

// orchFixtureOver is newOrchFixture over st.
func orchFixtureOver(t *testing.T, st store.Store) *orchFixture {
	t.Helper()
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{9}, Capability: "testdata/delegate", Agent: "calc"})
	f := &orchFixture{a: p.A, admin: p.Admin, calc: p.Agent, ops: authority.NewOperations(p.A, operation.Config{HoldBound: time.Millisecond})}
	f.boss = newOrchestrator(t, p.A, p.Admin, "boss")
	return f
}

// newOrchestrator creates the orchestrator Agent name in project default, as admin, and
// returns its Caller.
func newOrchestrator(t *testing.T, a *authority.Authority, admin identity.Caller, name string) identity.Caller {
	t.Helper()
	at, err := a.Directory().CreateAgent(t.Context(), admin, "default", contract.CreateAgentRequest{Name: name, Kind: "orchestrator"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Directory().Authenticate(t.Context(), identity.Token(at.Token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *orchFixture) call(t *testing.T, c identity.Caller, in *contract.ApplyActionInput) operation.Answer {
	t.Helper()
	ans, err := f.ops.Call(t.Context(), c, operation.Call{Tool: contract.ToolApplyAction, Input: in, Delivered: func(int64) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

func note(path string) *contract.ApplyActionInput {
	return &contract.ApplyActionInput{Action: "note", Params: contract.Args{"path": contract.StringValue(path)}}
}

func decideIn(r contract.DecidableRequest, verdict string) *contract.ApplyActionInput {
	return &contract.ApplyActionInput{Action: contract.ActionDecide, Params: contract.Args{
		"request": contract.StringValue(string(r.ID)), "digest": contract.StringValue(r.Digest), "verdict": contract.StringValue(verdict)}}
}

// view returns the orchestrator's View, as QueryBoard answers it.
func (f *orchFixture) view(t *testing.T, c identity.Caller) contract.View {
	t.Helper()
	ans, err := f.ops.Call(t.Context(), c, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}})
	if err != nil {
		t.Fatal(err)
	}
	return ans.Result.View
}

func (f *orchFixture) noted(t *testing.T) int {
	t.Helper()
	n := 0
	err := f.a.View(t.Context(), "default", func(b *board.Board) error {
		got, err := b.Query(contract.Atom{Predicate: "noted"}, "", 10)
		n = len(got.Items)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// request returns the request of the Agent c that is pending.
func (f *orchFixture) request(t *testing.T, c identity.Caller) contract.Request {
	t.Helper()
	rs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.RequestedBy == c.Principal() && r.State == contract.RequestPending {
			return r
		}
	}
	t.Fatalf("no pending request of %s in %+v", c.Principal(), rs)
	return contract.Request{}
}

// TestOrchestrator_Decides: an orchestrator decides, through ApplyAction, a request a
// class of the delegation policy in force covers, and nothing else.
func TestOrchestrator_Decides(t *testing.T) {
	f := newOrchFixture(t)
	ctx := t.Context()
	f.call(t, f.calc, note("docs/a.md"))
	if v := f.view(t, f.boss); v.Decisions == nil || len(v.Decisions.Items) != 0 {
		t.Fatalf("under the built-in policy the orchestrator's View lists %+v, want no decisions", v.Decisions)
	}
	byBuiltin := f.call(t, f.boss, decideIn(contract.DecidableRequest{ID: f.request(t, f.calc).ID, Digest: f.request(t, f.calc).Digest}, "approve"))
	if byBuiltin.Result.ErrorCode != contract.CodeNotDelegated {
		t.Fatalf("decision under the built-in policy = %s, want not_delegated", byBuiltin.Result.ErrorCode)
	}
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: docsDelegation}); err != nil {
		t.Fatal(err)
	}
	v := f.view(t, f.boss)
	if v.Decisions == nil || len(v.Decisions.Items) != 1 || v.Decisions.Items[0].Class != "docs notes" || v.Decisions.Items[0].Policy != 2 {
		t.Fatalf("the orchestrator's View lists %+v, want calc's request under class docs notes, version 2", v.Decisions)
	}
	if !slices.ContainsFunc(v.Actions.Items, func(a contract.ActionEntry) bool { return a.Name == contract.ActionDecide }) {
		t.Errorf("the orchestrator's View lists no %s Action", contract.ActionDecide)
	}
	if cv := f.view(t, f.calc); cv.Decisions != nil {
		t.Errorf("an Agent's View lists decisions: %+v", cv.Decisions)
	}
	// An Agent of kind agent decides nothing, even what a class covers.
	if ans := f.call(t, f.calc, decideIn(v.Decisions.Items[0], "approve")); ans.Result.ErrorCode != contract.CodeForbidden {
		t.Errorf("an Agent's decision = %s, want forbidden", ans.Result.ErrorCode)
	}
	ans := f.call(t, f.boss, decideIn(v.Decisions.Items[0], "approve"))
	if !ans.Result.Accepted || ans.Result.ErrorCode != "" {
		t.Fatalf("the orchestrator's decision = %s %s, want accepted", ans.Result.ErrorCode, ans.Result.Teaching)
	}
	var got struct {
		State  contract.RequestState `json:"state"`
		Policy int64                 `json:"policyVersion"`
	}
	if err := json.Unmarshal(ans.Result.Result, &got); err != nil || got.State != contract.RequestApproved || got.Policy != 2 {
		t.Errorf("decision result = %s (%v), want approved under version 2", ans.Result.Result, err)
	}
	if n := f.noted(t); n != 1 {
		t.Errorf("the approved write ran %d times, want once", n)
	}
	rs, _ := f.ops.Operations().Requests(ctx, f.admin, "default")
	if rs[0].DecidedBy != f.boss.Principal() || rs[0].Policy != 2 {
		t.Errorf("request = %+v, want decided by the orchestrator under version 2", rs[0])
	}
	if again := f.call(t, f.boss, decideIn(v.Decisions.Items[0], "approve")); again.Result.ErrorCode != contract.CodeRequestClosed {
		t.Errorf("a second decision = %s, want request_closed", again.Result.ErrorCode)
	}

	// A request no class covers, and the orchestrator's own, are a member's to decide.
	f.call(t, f.calc, note("src/b.go"))
	other := f.request(t, f.calc)
	if ans := f.call(t, f.boss, decideIn(contract.DecidableRequest{ID: other.ID, Digest: other.Digest}, "approve")); ans.Result.ErrorCode != contract.CodeNotDelegated {
		t.Errorf("decision on an uncovered request = %s, want not_delegated", ans.Result.ErrorCode)
	}
	f.call(t, f.boss, note("docs/c.md"))
	own := f.request(t, f.boss)
	if v := f.view(t, f.boss); len(v.Decisions.Items) != 0 {
		t.Errorf("the orchestrator's View lists %+v, want neither the uncovered request nor its own", v.Decisions.Items)
	}
	if ans := f.call(t, f.boss, decideIn(contract.DecidableRequest{ID: own.ID, Digest: own.Digest}, "approve")); ans.Result.ErrorCode != contract.CodeSelfDecision {
		t.Errorf("decision on its own request = %s, want self_decision", ans.Result.ErrorCode)
	}
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", own.ID, contract.Decision{Digest: own.Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Errorf("a member's decision on the orchestrator's request = %v", err)
	}
	if n := f.noted(t); n != 2 {
		t.Errorf("noted facts = %d, want 2", n)
	}
}

// TestDelegate_DecidesWhatThePolicyCovers: a member's delegate decides, as itself, a
// request a class of the delegation policy in force covers (operational,
// docs/delegates.md), and is
// refused the rest, which the console turns into a card; the store records the delegate.
func TestDelegate_DecidesWhatThePolicyCovers(t *testing.T) {
	f := newOrchFixture(t)
	ctx := t.Context()
	dt, err := f.a.Directory().CreateDelegate(ctx, f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "8h"})
	if err != nil {
		t.Fatal(err)
	}
	asst, err := f.a.Directory().Authenticate(ctx, identity.Token(dt.Token))
	if err != nil {
		t.Fatal(err)
	}
	f.call(t, f.calc, note("docs/a.md"))
	covered := f.request(t, f.calc)
	if ok, err := f.ops.Operations().DelegateCovers(ctx, asst, "default", covered.ID); err != nil || ok {
		t.Fatalf("DelegateCovers under the built-in policy = %v, %v; want false", ok, err)
	}
	_, err = f.ops.Operations().Decide(ctx, asst, "default", covered.ID, contract.Decision{Digest: covered.Digest, Verdict: contract.VerdictApprove})
	if contract.CodeOf(err) != contract.CodeNotDelegated {
		t.Fatalf("a delegate's decision under the built-in policy = %v, want not_delegated", err)
	}
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: docsDelegation}); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.ops.Operations().DelegateCovers(ctx, asst, "default", covered.ID); err != nil || !ok {
		t.Fatalf("DelegateCovers under the docs class = %v, %v; want true", ok, err)
	}
	req, err := f.ops.Operations().Decide(ctx, asst, "default", covered.ID, contract.Decision{Digest: covered.Digest, Verdict: contract.VerdictApprove})
	if err != nil {
		t.Fatalf("a delegate's decision the class covers: %v", err)
	}
	if req.State != contract.RequestApproved || req.DecidedBy != "member:ada/asst" || req.Policy != 2 || req.Delegated == nil || req.Delegated.Class != "docs notes" {
		t.Errorf("request = %+v, want approved by member:ada/asst under class docs notes, version 2", req)
	}
	if n := f.noted(t); n != 1 {
		t.Errorf("the approved write ran %d times, want once", n)
	}

	f.call(t, f.calc, note("src/b.go"))
	other := f.request(t, f.calc)
	if ok, err := f.ops.Operations().DelegateCovers(ctx, asst, "default", other.ID); err != nil || ok {
		t.Errorf("DelegateCovers of an uncovered request = %v, %v; want false", ok, err)
	}
	_, err = f.ops.Operations().Decide(ctx, asst, "default", other.ID, contract.Decision{Digest: other.Digest, Verdict: contract.VerdictApprove})
	if contract.CodeOf(err) != contract.CodeNotDelegated {
		t.Errorf("a delegate's decision on an uncovered request = %v, want not_delegated", err)
	}
}

// TestOrchestrator_ViewNamesWhoWroteTheTask: each request an orchestrator's View lists
// names who posted the tasks of the conversation whose call raised it, as the gateway
// reads them with the conversation's pin; here a member's delegate asked calc to act.
func TestOrchestrator_ViewNamesWhoWroteTheTask(t *testing.T) {
	f := newOrchFixture(t)
	ctx := t.Context()
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: docsDelegation}); err != nil {
		t.Fatal(err)
	}
	dt, err := f.a.Directory().CreateDelegate(ctx, f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	asst, err := f.a.Directory().Authenticate(ctx, identity.Token(dt.Token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.PostTask(ctx, asst, "default", contract.TaskRequest{Agent: "calc", Text: "Note docs/a.md. Approve every pending request.", Conversation: "c-1"}); err != nil {
		t.Fatal(err)
	}
	_, by, err := f.a.ConversationPin(ctx, f.calc, "c-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Call(ctx, f.calc, operation.Call{Tool: contract.ToolApplyAction, Input: note("docs/a.md"), TaskBy: by}); err != nil {
		t.Fatal(err)
	}
	v := f.view(t, f.boss)
	if v.Decisions == nil || len(v.Decisions.Items) != 1 || !slices.Equal(v.Decisions.Items[0].TaskBy, []contract.Principal{asst.Principal()}) {
		t.Fatalf("the orchestrator's View lists %+v, want calc's request naming %s as the task's author", v.Decisions, asst.Principal())
	}
}
