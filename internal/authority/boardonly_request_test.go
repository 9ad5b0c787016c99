package authority_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// valueEqual compares Values, whose fields are unexported, by value.
var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

// newGrantFixture is an ops fixture with the grant capability installed too.
func newGrantFixture(t *testing.T) *opsFixture {
	t.Helper()
	f := newOpsFixture(t, time.Minute)
	if _, err := f.a.InstallCapability(t.Context(), f.admin, "default", authoritytest.ReadPackage(t, "testdata/grant")); err != nil {
		t.Fatalf("InstallCapability(grant): %v", err)
	}
	return f
}

// roster records, as the member at tier attested, that user has level; it retracts the
// node retract first when given. The node id is "roster-" + user + "-" + level.
func (f *opsFixture) roster(t *testing.T, user, level, retract string) {
	t.Helper()
	member := f.admin.Principal()
	ops := []contract.Operation{{Op: contract.OpAssertFact, NodeID: "roster-" + user + "-" + level,
		Atom: &contract.Atom{Predicate: "roster", Args: contract.Args{"user": contract.StringValue(user), "level": contract.StringValue(level)}}}}
	if retract != "" {
		ops = append([]contract.Operation{{Op: contract.OpRetractNode, NodeID: retract}}, ops...)
	}
	err := f.a.Commit(t.Context(), "default", member, func(bd *board.Board) (boards.Change, error) {
		res, err := bd.ApplyBatch(board.Author{Principal: member, Tier: contract.TierAttested}, contract.Batch{Operations: ops})
		return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, err
	})
	if err != nil {
		t.Fatalf("roster %s %s: %v", user, level, err)
	}
}

// granted returns the granted facts on the Board as "user level".
func (f *opsFixture) granted(t *testing.T) []string {
	t.Helper()
	var out []string
	err := f.a.View(t.Context(), "default", func(b *board.Board) error {
		got, err := b.Query(contract.Atom{Predicate: "granted", Args: contract.Args{"user": contract.VarValue("u"), "level": contract.VarValue("l")}}, "", 0)
		for _, n := range got.Items {
			out = append(out, n.Atom.Args["user"].Str()+" "+n.Atom.Args["level"].Str())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pendingRequest returns the newest Request of the project, which must be pending.
func (f *opsFixture) pendingRequest(t *testing.T) contract.Request {
	t.Helper()
	rs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
	if err != nil || len(rs) == 0 {
		t.Fatalf("Requests = %v, %v; want one", rs, err)
	}
	r := rs[len(rs)-1]
	if r.State != contract.RequestPending {
		t.Fatalf("newest request is %s, want pending", r.State)
	}
	return r
}

// openAccess opens the agent's access Case of user and returns its id. It is the
// agent's Operation ordinal after delivered.
func (f *opsFixture) openAccess(t *testing.T, user string, delivered ...int64) contract.CaseID {
	t.Helper()
	in := &contract.OpenCaseInput{CaseType: "access", BusinessKey: contract.Args{"user": contract.StringValue(user)}}
	ans, err := f.ops.Call(t.Context(), f.agent, operation.Call{Tool: contract.ToolOpenCase, Input: in,
		Delivered: func(o int64) bool { return contains(delivered, o) }})
	if err != nil || state(ans) != contract.OpDone || len(ans.Focus) != 1 {
		t.Fatalf("OpenCase(access %s) = %+v, %v; want done", user, ans.Result, err)
	}
	return ans.Focus[0]
}

func grantCall(c contract.CaseID, note string) *contract.ApplyActionInput {
	return &contract.ApplyActionInput{CaseID: c, Action: "grant", Params: contract.Args{"note": contract.StringValue(note)}}
}

// TestOperations_BoardOnlyRequestBindsArgs: the Request of a Board-only Action covers its
// exact arguments after bindings, and its approval runs the call once.
func TestOperations_BoardOnlyRequestBindsArgs(t *testing.T) {
	f := newGrantFixture(t)
	f.roster(t, "ann", "reader", "")
	c := f.openAccess(t, "ann")
	if ans := f.call(t, f.ops, grantCall(c, "onboarding"), 1); state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("grant = %s %s %+v, want waiting_for_decision", ans.Result.ErrorCode, ans.Result.Teaching, ans.Result.Operations)
	}
	r := f.pendingRequest(t)
	want := contract.RequestVector{Action: "grant", CaseID: c, Args: contract.Args{"user": contract.StringValue("ann"),
		"level": contract.StringValue("reader"), "note": contract.StringValue("onboarding")}}
	if diff := cmp.Diff(want, r.Vector, valueEqual); diff != "" {
		t.Errorf("request vector (-want +got):\n%s", diff)
	}
	if d, err := operation.RequestDigest(want); err != nil || d != r.Digest {
		t.Errorf("request digest = %s, want %s (%v): the digest of the bound arguments", r.Digest, d, err)
	}
	if got := f.granted(t); len(got) != 0 {
		t.Fatalf("granted before the decision = %v, want none", got)
	}

	got, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove})
	if err != nil || got.State != contract.RequestApproved {
		t.Fatalf("Decide(approve) = %+v, %v; want approved", got, err)
	}
	st, err := f.ops.Operations().State(t.Context(), f.agent)
	if err != nil {
		t.Fatal(err)
	}
	if e := st.State[0]; e.State != contract.OpDone || e.Ordinal != 2 {
		t.Errorf("operation after approval = %+v, want ordinal 2 done", e)
	}
	if diff := cmp.Diff([]string{"ann reader"}, f.granted(t)); diff != "" {
		t.Errorf("granted after approval (-want +got):\n%s", diff)
	}

	// The approval ran its one call: deciding again is refused and runs nothing.
	_, err = f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove})
	if code := contract.CodeOf(err); code != contract.CodeRequestClosed {
		t.Errorf("second approval = %v, want request_closed", err)
	}
	// The same call again is a new Request, waiting for its own decision.
	if ans := f.call(t, f.ops, grantCall(c, "onboarding"), 2); state(ans) != contract.OpWaitingForDecision {
		t.Errorf("the same call again = %s %+v, want waiting_for_decision", ans.Result.ErrorCode, ans.Result.Operations)
	}
	if again := f.pendingRequest(t); again.ID == r.ID || again.Digest != r.Digest {
		t.Errorf("the same call again = request %s %s, want a new request with the same digest %s", again.ID, again.Digest, r.Digest)
	}
	if diff := cmp.Diff([]string{"ann reader"}, f.granted(t)); diff != "" {
		t.Errorf("granted after the second call (-want +got):\n%s", diff)
	}
}

// TestOperations_BoardOnlyChangedCall: a decision holds only for the call it read. A
// bound premise revised before the approval voids it; a call with other params has
// another digest, which the first one's decision does not fit.
func TestOperations_BoardOnlyChangedCall(t *testing.T) {
	t.Run("bound premise revised", func(t *testing.T) {
		f := newGrantFixture(t)
		f.roster(t, "ann", "reader", "")
		c := f.openAccess(t, "ann")
		f.call(t, f.ops, grantCall(c, "onboarding"), 1)
		r := f.pendingRequest(t)
		f.roster(t, "ann", "admin", "roster-ann-reader") // the premise changes before the decision
		got, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove})
		if err != nil || got.State != contract.RequestVoid {
			t.Fatalf("Decide = %+v, %v; want the request void", got, err)
		}
		st, err := f.ops.Operations().State(t.Context(), f.agent)
		if err != nil {
			t.Fatal(err)
		}
		if e := st.State[0]; e.State != contract.OpRefused || e.Ordinal != 2 || !strings.Contains(string(e.Result), string(contract.CodeCallChanged)) {
			t.Errorf("operation after a changed premise = %+v %s, want refused call_changed", e.OperationEntry, e.Result)
		}
		if got := f.granted(t); len(got) != 0 {
			t.Errorf("granted after a void approval = %v, want none", got)
		}
	})
	t.Run("other params", func(t *testing.T) {
		f := newGrantFixture(t)
		f.roster(t, "ann", "reader", "")
		c := f.openAccess(t, "ann")
		f.call(t, f.ops, grantCall(c, "onboarding"), 1)
		first := f.pendingRequest(t)
		if _, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", first.ID, contract.Decision{Digest: first.Digest, Verdict: contract.VerdictDeny, Reason: "not now"}); err != nil {
			t.Fatal(err)
		}
		f.call(t, f.ops, grantCall(c, "audit"), 2)
		second := f.pendingRequest(t)
		if second.Digest == first.Digest {
			t.Fatalf("requests with notes onboarding and audit share digest %s", first.Digest)
		}
		_, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", second.ID, contract.Decision{Digest: first.Digest, Verdict: contract.VerdictApprove})
		if code := contract.CodeOf(err); code != contract.CodeDigestMismatch {
			t.Errorf("approving the audit call with the onboarding call's digest = %v, want digest_mismatch", err)
		}
		if got := f.granted(t); len(got) != 0 {
			t.Errorf("granted = %v, want none", got)
		}
	})
}
