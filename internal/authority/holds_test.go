package authority_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// TestAuthority_CaseHolds: a member's hold pauses a Case, whose Actions and close are
// refused case_paused naming the hold; the recovery policy holds the Case while one of its
// executed Actions needs a person; each hold is released only by its own kind of owner
// (no member releases the policy's, an Agent releases nothing); the Case then runs again
// and certifies. Every hold and release is an event.
func TestAuthority_CaseHolds(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	if _, err := f.a.InstallCapability(ctx, f.admin, "default", authoritytest.ReadPackage(t, "testdata/hold")); err != nil {
		t.Fatal(err)
	}
	f.roster(t, "ann", "reader", "")
	open, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolOpenCase,
		Input: &contract.OpenCaseInput{CaseType: "review", BusinessKey: contract.Args{"user": contract.StringValue("ann")}}})
	if err != nil || state(open) != contract.OpDone {
		t.Fatalf("OpenCase = %+v, %v", open.Result, err)
	}
	c := open.Focus[0]
	delivered := func(int64) bool { return true }
	closeCase := func() operation.Answer {
		t.Helper()
		ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolCloseCase,
			Input: &contract.CloseCaseInput{CaseID: c, Disposition: contract.DispositionCompleted}, Delivered: delivered})
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	fetchIn := func() operation.Answer {
		t.Helper()
		ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolApplyAction,
			Input: &contract.ApplyActionInput{CaseID: c, Action: "fetch", Params: contract.Args{"path": contract.StringValue("a.txt")}}, Delivered: delivered})
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}

	_, err = f.a.HoldCase(ctx, f.agent, "default", c, "an agent pausing")
	wantCode(t, err, contract.CodeForbidden)
	cs, err := f.a.HoldCase(ctx, f.admin, "default", c, "checking the roster by hand")
	if err != nil || cs.Status != contract.CasePaused || len(cs.Holds) != 1 || cs.Holds[0].Owner != contract.HoldMember {
		t.Fatalf("HoldCase = %+v, %v; want paused by one member's hold", cs, err)
	}
	for name, ans := range map[string]operation.Answer{"fetch": fetchIn(), "close": closeCase()} {
		if state(ans) != contract.OpRefused || ans.Result.ErrorCode != contract.CodeCasePaused || !strings.Contains(ans.Result.Teaching, "checking the roster by hand") {
			t.Fatalf("%s in a paused Case = %s %s %q; want refused case_paused naming the hold", name, state(ans), ans.Result.ErrorCode, ans.Result.Teaching)
		}
	}
	_, err = f.a.ResumeCase(ctx, f.agent, "default", c, "")
	wantCode(t, err, contract.CodeForbidden)
	if cs, err = f.a.ResumeCase(ctx, f.admin, "default", c, ""); err != nil || cs.Status != contract.CaseRunning {
		t.Fatalf("ResumeCase = %+v, %v; want running", cs, err)
	}

	// The recovery policy holds the Case while a fetch in it needs a person.
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "r.toml",
		Text: "[recovery_policy]\nhold_cases = true\n"}); err != nil {
		t.Fatal(err)
	}
	fetch := fetchIn()
	if state(fetch) != contract.OpRunning {
		t.Fatalf("fetch = %s %s, want running", state(fetch), fetch.Result.ErrorCode)
	}
	id := operation.WorkID(f.agent.ID, fetch.Meta.Ordinal)
	l := f.startup(t, "wkr-a")
	rows := f.poll(t, l, fetchTool)
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	f.startup(t, "wkr-b") // wkr-a lost its lease while the fetch ran: it needs a person
	sweep := func(want int) {
		t.Helper()
		if n, err := f.ops.Operations().SweepHolds(ctx); err != nil || n != want {
			t.Fatalf("SweepHolds = %d, %v; want %d", n, err, want)
		}
	}
	sweep(1)
	sweep(0) // held once
	cs, err = f.a.Case(ctx, f.admin, "default", c)
	if err != nil || cs.Status != contract.CasePaused || len(cs.Holds) != 1 {
		t.Fatalf("Case after the sweep = %+v, %v; want paused by the policy's hold", cs, err)
	}
	h := cs.Holds[0]
	if h.Owner != contract.HoldPolicy || h.Policy != "recovery" || h.Subject != id || !strings.Contains(h.Reason, "needs_person") {
		t.Fatalf("the policy's hold = %+v", h)
	}
	_, err = f.a.ResumeCase(ctx, f.admin, "default", c, h.ID)
	wantCode(t, err, contract.CodeHoldNotOwner)
	_, err = f.a.ResumeCase(ctx, f.admin, "default", c, "")
	wantCode(t, err, contract.CodeHoldNotFound)

	if _, err := f.d.Reconcile(ctx, f.admin, "default", id, contract.ReconcileRequest{Outcome: "unknown", Reason: "the file server was down"}); err != nil {
		t.Fatal(err)
	}
	sweep(1)
	if cs, err = f.a.Case(ctx, f.admin, "default", c); err != nil || cs.Status != contract.CaseRunning || cs.Holds != nil {
		t.Fatalf("Case after the reconcile = %+v, %v; want running", cs, err)
	}

	if ans := closeCase(); state(ans) != contract.OpDone {
		t.Fatalf("CloseCase completed after the holds = %s %s %s; want done (certified)", state(ans), ans.Result.ErrorCode, ans.Result.Teaching)
	}

	evs, err := f.a.Events(ctx, f.admin, "default", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var held, released []string
	for _, e := range evs {
		if e.Type != event.CaseHeld && e.Type != event.CaseReleased {
			continue
		}
		pl, err := event.Decode(e.Type, e.Data)
		if err != nil {
			t.Fatal(err)
		}
		switch p := pl.(type) {
		case event.CaseHeldData:
			held = append(held, string(p.Hold.Owner)+" "+e.Actor)
		case event.CaseReleasedData:
			released = append(released, string(p.Hold.Owner)+" "+string(p.By)+" "+map[bool]string{true: "running", false: "paused"}[p.Running])
		}
	}
	want := "member " + string(f.admin.Principal()) + ",policy authority"
	if strings.Join(held, ",") != want {
		t.Errorf("case.held events = %v, want %s", held, want)
	}
	if got := strings.Join(released, ","); got != "member "+string(f.admin.Principal())+" running,policy authority running" {
		t.Errorf("case.released events = %s", got)
	}
}
