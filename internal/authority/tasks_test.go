package authority_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/authority/task"
	"github.com/docketrun/docket/internal/contract"
)

// TestAuthority_PostTask: a member posts a task for an Agent; the conversation is made
// when none is named; the same client key with the same request is the same task, with
// other content a conflict; strict checks refuse what cannot be kept.
func TestAuthority_PostTask(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	req := contract.TaskRequest{Agent: "calc", Text: "Verify job calc-001.", ClientKey: "k-1"}
	first, err := f.a.PostTask(ctx, f.admin, "default", req)
	if err != nil {
		t.Fatal(err)
	}
	if first.State != contract.TaskQueued || !strings.HasPrefix(string(first.Conversation), "c-") || first.Agent != contract.AgentID(f.agent.ID) || first.Kind != contract.TaskKindTask {
		t.Errorf("posted = %+v, want queued for calc in a made conversation", first)
	}
	again, err := f.a.PostTask(ctx, f.admin, "default", req)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID {
		t.Errorf("the same client key posted %s after %s, want the same task", again.ID, first.ID)
	}
	other := req
	other.Text = "something else"
	_, err = f.a.PostTask(ctx, f.admin, "default", other)
	wantCode(t, err, contract.CodeTaskConflict)

	tests := []struct {
		name string
		req  contract.TaskRequest
		code contract.Code
	}{
		{"empty text", contract.TaskRequest{Agent: "calc", Text: "  "}, contract.CodeInvalidArgument},
		{"no agent", contract.TaskRequest{Text: "x"}, contract.CodeInvalidArgument},
		{"unknown agent", contract.TaskRequest{Agent: "nobody", Text: "x"}, contract.CodeNotFound},
		{"bad conversation id", contract.TaskRequest{Agent: "calc", Text: "x", Conversation: "-no"}, contract.CodeInvalidArgument},
		{"key without type", contract.TaskRequest{Agent: "calc", Text: "x", BusinessKey: contract.Args{"job_id": contract.StringValue("a")}}, contract.CodeInvalidArgument},
		{"bad client key", contract.TaskRequest{Agent: "calc", Text: "x", ClientKey: "a b"}, contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.PostTask(ctx, f.admin, "default", tt.req)
			wantCode(t, err, tt.code)
		})
	}

	t.Run("an Agent posts only for itself", func(t *testing.T) {
		own, err := f.a.PostTask(ctx, f.agent, "default", contract.TaskRequest{Text: "self", Conversation: "s-1"})
		if err != nil {
			t.Fatal(err)
		}
		if own.Agent != contract.AgentID(f.agent.ID) || own.PostedBy != f.agent.Principal() {
			t.Errorf("own task = %+v, want the Agent's own", own)
		}
		_, err = f.a.PostTask(ctx, f.agent, "default", contract.TaskRequest{Agent: "someone", Text: "x"})
		wantCode(t, err, contract.CodeForbidden)
	})

	t.Run("a message needs a conversation that exists", func(t *testing.T) {
		_, err := f.a.PostMessage(ctx, f.admin, "default", "calc", "nowhere", contract.MessageRequest{Text: "hi"})
		wantCode(t, err, contract.CodeNotFound)
		m, err := f.a.PostMessage(ctx, f.admin, "default", "calc", first.Conversation, contract.MessageRequest{Text: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind != contract.TaskKindMessage || m.Conversation != first.Conversation {
			t.Errorf("message = %+v, want a message in %s", m, first.Conversation)
		}
	})

	t.Run("a pin does not move", func(t *testing.T) {
		key := contract.Args{"topic": contract.StringValue("calc-001")}
		if _, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x", Conversation: "p-1", CaseType: "exploration", BusinessKey: key}); err != nil {
			t.Fatal(err)
		}
		_, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "y", Conversation: "p-1", CaseType: "exploration",
			BusinessKey: contract.Args{"topic": contract.StringValue("calc-002")}})
		wantCode(t, err, contract.CodeTaskConflict)
		pin, by, err := f.a.ConversationPin(ctx, f.agent, "p-1")
		if err != nil {
			t.Fatal(err)
		}
		if pin.CaseType != "exploration" || len(pin.BusinessKey) != 1 || pin.BusinessKey["topic"].String() != key["topic"].String() {
			t.Errorf("pin = %+v, want exploration and topic calc-001", pin)
		}
		if len(by) != 1 || by[0] != f.admin.Principal() {
			t.Errorf("the conversation's tasks were posted by %v, want only %s", by, f.admin.Principal())
		}
	})

	// A pin the project has no Case Type or key for is refused when posted, naming what
	// the project has, rather than queued to fail in the model's run.
	t.Run("a pin the project cannot honour", func(t *testing.T) {
		topic := contract.Args{"topic": contract.StringValue("a")}
		tests := []struct {
			name  string
			pin   string
			key   contract.Args
			code  contract.Code
			words []string
		}{
			{"a misspelt Case Type", "exploraton", topic, contract.CodeCaseTypeUnknown, []string{`no Case Type "exploraton"`, "did you mean exploration?", "use one of exploration"}},
			{"a Case Type not installed", "verified_calculation", contract.Args{"job_id": contract.StringValue("a")}, contract.CodeCaseTypeUnknown, []string{"use one of exploration", "install the capability"}},
			{"a misspelt key argument", "exploration", contract.Args{"topc": contract.StringValue("a")}, contract.CodeCaseBusinessKey, []string{"topc is not part of the business key of exploration (did you mean topic?)", "pass exactly topic"}},
			{"a key argument missing", "exploration", contract.Args{"other": contract.StringValue("a")}, contract.CodeCaseBusinessKey, []string{"pass exactly topic"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x", CaseType: tt.pin, BusinessKey: tt.key})
				wantCode(t, err, tt.code)
				for _, w := range tt.words {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("PostTask = %v, want it to say %q", err, w)
					}
				}
			})
		}
	})

	list, err := f.a.Tasks(ctx, f.admin, "default", "calc")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 || list[0].ID != first.ID {
		t.Errorf("listed %d tasks starting %+v, want 4 starting with %s", len(list), list[0], first.ID)
	}
}

// TestAuthority_ClaimTask: a runtime claims a task under a lease; a claim that runs out is
// taken again by the next attempt and the old one may report no more; a report that
// names pending Operations leaves the task waiting, and the Operation's decision wakes it
// through a long-poll.
func TestAuthority_ClaimTask(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	posted, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "mark it", Conversation: "w-1"})
	if err != nil {
		t.Fatal(err)
	}
	claim := func(wait time.Duration) contract.TaskClaim {
		t.Helper()
		c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{WaitMS: int(wait.Milliseconds())})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := claim(0)
	if c1.Task == nil || c1.Task.ID != posted.ID || c1.Task.Attempt != 1 || c1.Wake {
		t.Fatalf("first claim = %+v, want task %s at attempt 1", c1, posted.ID)
	}
	if c := claim(0); c.Task != nil {
		t.Fatalf("a second claim took %+v while the first holds its lease", c.Task)
	}
	_, err = f.a.ClaimTask(ctx, f.admin, contract.TaskClaimRequest{})
	wantCode(t, err, contract.CodeForbidden)

	f.clock.Add(task.DefaultLease + time.Second)
	c2 := claim(0)
	if c2.Task == nil || c2.Task.Attempt != 2 {
		t.Fatalf("claim after the lease ran out = %+v, want attempt 2", c2)
	}
	_, err = f.a.ReportTask(ctx, f.agent, posted.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCompleted, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}})
	wantCode(t, err, contract.CodeTaskNotClaimed)
	if _, err := f.a.RenewTask(ctx, f.agent, posted.ID, contract.TaskRenewal{Attempt: 2}); err != nil {
		t.Fatalf("renew attempt 2: %v", err)
	}
	// A renewal names what the run waits on; the task shows it until the run reports.
	since := time.Now().UTC().Round(0)
	wait := &contract.TaskRunWait{On: contract.RunWaitModel, Origin: "http://127.0.0.1:8080", Phase: contract.RunWaitFirstByte, Since: since, Deadline: since.Add(time.Minute)}
	_, err = f.a.RenewTask(ctx, f.agent, posted.ID, contract.TaskRenewal{Attempt: 2, Wait: &contract.TaskRunWait{On: contract.RunWaitModel, Origin: "http://h/v1/k-secret", Phase: contract.RunWaitIdle, Since: since, Deadline: since.Add(time.Minute)}})
	wantCode(t, err, contract.CodeInvalidArgument)
	if renewed, err := f.a.RenewTask(ctx, f.agent, posted.ID, contract.TaskRenewal{Attempt: 2, Wait: wait}); err != nil || renewed.RunWait == nil || *renewed.RunWait != *wait {
		t.Fatalf("renew with a wait = %+v, %v; want the wait on the task", renewed.RunWait, err)
	}
	if shown, err := f.a.Task(ctx, f.admin, "default", posted.ID); err != nil || shown.RunWait == nil || !shown.RunWait.Deadline.Equal(wait.Deadline) {
		t.Fatalf("the task as read = %+v, %v; want its run wait", shown.RunWait, err)
	}

	req := f.pendingMark(t, "t")
	waiting := []contract.TaskWait{{CallID: "c1", Tool: contract.ToolApplyAction, Ordinal: 1}}
	rep := contract.TaskReport{Attempt: 2, State: contract.TaskWaiting, Waiting: waiting, TaskResult: contract.TaskResult{Final: "asked", ClosedCases: []contract.ClosedCase{}}}
	got, err := f.a.ReportTask(ctx, f.agent, posted.ID, rep)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != contract.TaskWaiting {
		t.Fatalf("reported = %+v, want waiting", got)
	}
	if again, err := f.a.ReportTask(ctx, f.agent, posted.ID, rep); err != nil || again.State != contract.TaskWaiting {
		t.Fatalf("the same report again = %+v, %v; want the task as it stands", again, err)
	}
	if c := claim(0); c.Task != nil {
		t.Fatalf("a task waiting on a pending decision was claimed: %+v", c.Task)
	}
	if ok, err := f.a.WaitOperations(ctx, f.agent, waiting, 0); err != nil || ok {
		t.Fatalf("WaitOperations before the decision = %v, %v; want false", ok, err)
	}

	woken := make(chan contract.TaskClaim, 1)
	go func() {
		c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{WaitMS: 30000})
		if err != nil {
			t.Error(err)
		}
		woken <- c
	}()
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	w := <-woken
	if w.Task == nil || w.Task.ID != posted.ID || !w.Wake || w.Task.Attempt != 3 {
		t.Fatalf("claim after the decision = %+v, want a wake of %s at attempt 3", w, posted.ID)
	}
	if ok, err := f.a.WaitOperations(ctx, f.agent, waiting, time.Second); err != nil || !ok {
		t.Fatalf("WaitOperations after the decision = %v, %v; want true", ok, err)
	}
	closed := []contract.ClosedCase{{CaseID: "case-1", Disposition: contract.DispositionCompleted}, {CaseID: "case-2", Disposition: contract.DispositionFailed}}
	done, err := f.a.ReportTask(ctx, f.agent, posted.ID, contract.TaskReport{Attempt: 3, State: contract.TaskCompleted, TaskResult: contract.TaskResult{Final: "done", ClosedCases: closed}})
	if err != nil {
		t.Fatal(err)
	}
	shown, err := f.a.Task(ctx, f.admin, "default", posted.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(done, shown); diff != "" {
		t.Errorf("the task as a member reads it (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(closed, shown.Result.ClosedCases); diff != "" {
		t.Errorf("closed cases, each with its own disposition (-want +got):\n%s", diff)
	}
}

// TestAuthority_ReportTask_Strict: a report the authority cannot keep is refused.
func TestAuthority_ReportTask_Strict(t *testing.T) {
	f := newOpsFixture(t, time.Millisecond)
	ctx := t.Context()
	posted, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task == nil {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	none := []contract.ClosedCase{}
	tests := []struct {
		name string
		rep  contract.TaskReport
	}{
		{"unknown state", contract.TaskReport{Attempt: 1, State: "queued", TaskResult: contract.TaskResult{ClosedCases: none}}},
		{"waiting on nothing", contract.TaskReport{Attempt: 1, State: contract.TaskWaiting, TaskResult: contract.TaskResult{ClosedCases: none}}},
		{"completed while waiting", contract.TaskReport{Attempt: 1, State: contract.TaskCompleted, Waiting: []contract.TaskWait{{Tool: "ApplyAction", Ordinal: 1}}, TaskResult: contract.TaskResult{ClosedCases: none}}},
		{"no closed cases", contract.TaskReport{Attempt: 1, State: contract.TaskCompleted}},
		{"bad disposition", contract.TaskReport{Attempt: 1, State: contract.TaskCompleted, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{{CaseID: "c", Disposition: "fine"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.ReportTask(ctx, f.agent, posted.ID, tt.rep)
			wantCode(t, err, contract.CodeInvalidArgument)
		})
	}
}

// TestOperations_CallPinned: a call of a conversation pinned to a Case Type and key is
// refused at admission, with no Operation, when it opens or works in another Case; on the
// pinned Case it runs.
func TestOperations_CallPinned(t *testing.T) {
	f := newGrantFixture(t)
	f.roster(t, "ann", "reader", "")
	f.roster(t, "bob", "reader", "")
	pin := contract.CasePin{CaseType: "access", BusinessKey: contract.Args{"user": contract.StringValue("ann")}}
	call := func(tool string, in any, delivered ...int64) operation.Answer {
		t.Helper()
		ans, err := f.ops.Call(t.Context(), f.agent, operation.Call{Tool: tool, Input: in, Pin: pin,
			Delivered: func(o int64) bool { return contains(delivered, o) }})
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	open := func(user string) *contract.OpenCaseInput {
		return &contract.OpenCaseInput{CaseType: "access", BusinessKey: contract.Args{"user": contract.StringValue(user)}}
	}
	if ans := call(contract.ToolOpenCase, open("bob")); ans.Result.ErrorCode != contract.CodeCasePinned || len(ans.Result.Operations) != 0 {
		t.Fatalf("OpenCase(bob) pinned to ann = %s %+v, want case_pinned and no Operation", ans.Result.ErrorCode, ans.Result.Operations)
	}
	if ans := call(contract.ToolOpenCase, open("ann")); state(ans) != contract.OpDone {
		t.Fatalf("OpenCase(ann) pinned to ann = %s %s, want done", ans.Result.ErrorCode, ans.Result.Teaching)
	}
	bob := f.openAccess(t, "bob", 1) // without the pin, as another conversation would
	ans := call(contract.ToolApplyAction, grantCall(bob, "x"), 2)
	if ans.Result.ErrorCode != contract.CodeCasePinned || !strings.Contains(ans.Result.Teaching, `"user":"bob"`) {
		t.Fatalf("grant in bob's Case pinned to ann = %s %q, want case_pinned naming bob's key", ans.Result.ErrorCode, ans.Result.Teaching)
	}
	closeBob := &contract.CloseCaseInput{CaseID: bob, Disposition: contract.DispositionCancelled, Reason: "x"}
	if ans := call(contract.ToolCloseCase, closeBob, 2); ans.Result.ErrorCode != contract.CodeCasePinned {
		t.Fatalf("CloseCase of bob's Case pinned to ann = %s, want case_pinned", ans.Result.ErrorCode)
	}
}

// TestAuthority_TasksSharedStore: two authorities on one database, as two docket serve: a
// task posted on one is claimed through the other's long-poll, only once when both are
// asked at the same time, and reported on the first.
func TestAuthority_TasksSharedStore(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			p := newPair(t, be.open)
			ctx := t.Context()
			at, err := p.a.Directory().CreateAgent(ctx, p.admin, "default", contract.CreateAgentRequest{Name: "calc"})
			if err != nil {
				t.Fatal(err)
			}
			agent, err := p.b.Directory().Authenticate(ctx, identity.Token(at.Token))
			if err != nil {
				t.Fatal(err)
			}
			claims := make(chan contract.TaskClaim, 2)
			for _, a := range []*authority.Authority{p.a, p.b} {
				go func() {
					c, err := a.ClaimTask(ctx, agent, contract.TaskClaimRequest{WaitMS: 2000})
					if err != nil {
						t.Error(err)
					}
					claims <- c
				}()
			}
			posted, err := p.a.PostTask(ctx, p.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x"})
			if err != nil {
				t.Fatal(err)
			}
			var taken []contract.TaskClaim
			for range 2 {
				if c := <-claims; c.Task != nil {
					taken = append(taken, c)
				}
			}
			if len(taken) != 1 || taken[0].Task.ID != posted.ID || taken[0].Task.Attempt != 1 {
				t.Fatalf("claims = %+v, want the task taken once, at attempt 1", taken)
			}
			done, err := p.a.ReportTask(ctx, agent, posted.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCompleted, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}})
			if err != nil || done.State != contract.TaskCompleted {
				t.Fatalf("report on the other instance = %+v, %v", done, err)
			}
			if got, err := p.b.Task(ctx, p.admin, "default", posted.ID); err != nil || got.State != contract.TaskCompleted {
				t.Errorf("the task read on the instance that served the claim = %+v, %v; want completed", got, err)
			}
		})
	}
}
