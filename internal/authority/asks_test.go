package authority_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// askPolicy lets calc ask writer without a person, and nobody else.
const askPolicy = `[delegation_policy]

[[delegation_policy.class]]
name   = "writing"
action = "docket.ask"
agent  = "writer"
`

// askFixture is calc (the asker) with the Agents writer and critic, under askPolicy.
type askFixture struct {
	*opsFixture
	writer, critic identity.Caller
}

func newAskFixture(t *testing.T) *askFixture {
	t.Helper()
	f := &askFixture{opsFixture: newOpsFixture(t, time.Millisecond)}
	ctx := t.Context()
	for _, p := range []struct {
		name string
		c    *identity.Caller
	}{{"writer", &f.writer}, {"critic", &f.critic}} {
		at, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: p.name})
		if err != nil {
			t.Fatal(err)
		}
		if *p.c, err = f.a.Directory().Authenticate(ctx, identity.Token(at.Token)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "delegation.toml", Text: askPolicy}); err != nil {
		t.Fatal(err)
	}
	return f
}

// ask makes calc's docket.ask of agent from conversation conv.
func (f *askFixture) ask(t *testing.T, conv contract.ConversationID, agent, text string, delivered ...int64) operation.Answer {
	t.Helper()
	in := &contract.ApplyActionInput{Action: contract.ActionAsk, Params: contract.Args{"agent": contract.StringValue(agent), "task": contract.StringValue(text)}}
	ans, err := f.ops.Call(t.Context(), f.agent, operation.Call{Tool: contract.ToolApplyAction, Input: in, Conversation: conv,
		Delivered: func(o int64) bool { return contains(delivered, o) }})
	if err != nil {
		t.Fatalf("docket.ask of %s: %v", agent, err)
	}
	return ans
}

// claimRoot posts a member's task for calc and claims it.
func (f *askFixture) claimRoot(t *testing.T) contract.Task {
	t.Helper()
	ctx := t.Context()
	root, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "Write and review the notes."})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{}); err != nil || c.Task == nil || c.Task.ID != root.ID {
		t.Fatalf("claim of the root = %+v, %v", c, err)
	}
	return root
}

// childOf returns the one task of agent whose parent is the task from.
func (f *askFixture) childOf(t *testing.T, agent string, from contract.TaskID) contract.Task {
	t.Helper()
	ts, err := f.a.Tasks(t.Context(), f.admin, "default", agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.Parent != nil && x.Parent.Task == from {
			return x
		}
	}
	t.Fatalf("%s has no task asked from %s: %+v", agent, from, ts)
	return contract.Task{}
}

// TestAuthority_Ask_CoveredRunsAndSettles: an ask a class covers posts the asked task at
// once, with its parent; the asking Operation runs at stage asked and stands outside the
// one-write-at-a-time rule; the asked task's report settles it with the report; an ask no
// class covers raises a request a member decides, and the approval posts the task.
func TestAuthority_Ask_CoveredRunsAndSettles(t *testing.T) {
	f := newAskFixture(t)
	ctx := t.Context()
	root := f.claimRoot(t)

	ans := f.ask(t, root.Conversation, "writer", "Draft the notes.")
	if state(ans) != contract.OpRunning || ans.Result.Operations[0].Stage != contract.StageAsked {
		t.Fatalf("covered ask = %s %+v, want running at stage asked", ans.Result.ErrorCode, ans.Result.Operations)
	}
	first := ans.Meta.Ordinal
	if !slices.ContainsFunc(ans.Result.View.Actions.Items, func(a contract.ActionEntry) bool { return a.Name == contract.ActionAsk && len(a.Params) == 2 }) {
		t.Errorf("the View lists %+v, want docket.ask while the delegation policy names it", ans.Result.View.Actions.Items)
	}
	child := f.childOf(t, "writer", root.ID)
	if child.Parent.Agent != contract.AgentID(f.agent.ID) || child.Parent.Ordinal != first || child.Parent.Depth != 1 ||
		child.PostedBy != f.agent.Principal() || child.Text != "Draft the notes." || child.State != contract.TaskQueued {
		t.Fatalf("asked task = %+v (parent %+v)", child, child.Parent)
	}

	// The second ask, to an Agent no class names, is admitted while the first runs, and
	// waits for a member.
	ans = f.ask(t, root.Conversation, "critic", "Review the notes.")
	if state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("uncovered ask = %s %+v, want waiting for a decision", ans.Result.ErrorCode, ans.Result.Operations)
	}
	second := ans.Meta.Ordinal
	reqs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
	if err != nil || len(reqs) != 1 || reqs[0].Vector.Action != contract.ActionAsk || reqs[0].Vector.Args["agent"].Str() != "critic" ||
		reqs[0].Vector.Args["from"].Str() != string(root.ID) {
		t.Fatalf("requests = %+v, %v; want the ask of critic", reqs, err)
	}
	if ts, _ := f.a.Tasks(ctx, f.admin, "default", "critic"); len(ts) != 0 {
		t.Fatalf("critic has tasks before the decision: %+v", ts)
	}
	if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", reqs[0].ID, contract.Decision{Digest: reqs[0].Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	review := f.childOf(t, "critic", root.ID)

	// writer runs its task and reports: calc's first ask settles with the report.
	if c, err := f.a.ClaimTask(ctx, f.writer, contract.TaskClaimRequest{}); err != nil || c.Task == nil || c.Task.ID != child.ID {
		t.Fatalf("writer's claim = %+v, %v", c, err)
	}
	closed := []contract.ClosedCase{{CaseID: "case_1", Disposition: contract.Disposition("completed")}}
	if _, err := f.a.ReportTask(ctx, f.writer, child.ID, contract.TaskReport{Attempt: 1, State: contract.TaskCompleted,
		TaskResult: contract.TaskResult{Final: "Drafted.", ClosedCases: closed}}); err != nil {
		t.Fatal(err)
	}
	op := f.opEntryOf(t, first)
	if op.State != contract.OpDone {
		t.Fatalf("the first ask after writer's report = %+v, want done", op)
	}
	var rep struct {
		Task        contract.TaskID       `json:"task"`
		State       contract.TaskState    `json:"state"`
		Final       string                `json:"final"`
		ClosedCases []contract.ClosedCase `json:"closedCases"`
	}
	if err := json.Unmarshal(op.Result, &rep); err != nil || rep.Task != child.ID || rep.State != contract.TaskCompleted || rep.Final != "Drafted." || len(rep.ClosedCases) != 1 {
		t.Fatalf("the ask's result = %s (%v), want writer's report", op.Result, err)
	}

	// The tree shows the root, its two asked tasks and their states.
	tree, err := f.a.TaskTree(ctx, f.admin, "default", review.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Task.ID != root.ID || len(tree.Children) != 2 || tree.Children[0].AgentName != "writer" || tree.Children[0].Task.State != contract.TaskCompleted ||
		tree.Children[1].AgentName != "critic" || tree.Children[1].Task.State != contract.TaskQueued {
		t.Fatalf("tree = %+v", tree)
	}

	// Cancelling the root cancels critic's open task, which settles the second ask.
	if _, err := f.a.CancelTask(ctx, f.admin, "default", root.ID); err != nil {
		t.Fatal(err)
	}
	got, err := f.a.Task(ctx, f.admin, "default", review.ID)
	if err != nil || got.State != contract.TaskCancelled || got.Cancel == nil || got.Cancel.By != f.admin.Principal() {
		t.Fatalf("critic's task after the root's cancel = %+v, %v; want cancelled", got, err)
	}
	if op := f.opEntryOf(t, second); op.State != contract.OpFailed || op.ReasonCode != "asked_task_cancelled" {
		t.Fatalf("the second ask after the cancel = %+v, want failed asked_task_cancelled", op)
	}
}

// TestAuthority_Ask_Refusals: an ask of oneself, of no Agent, with a caseId, past the
// fan-out bound, or from a task already at the depth bound is refused with its code.
func TestAuthority_Ask_Refusals(t *testing.T) {
	f := newAskFixture(t)
	root := f.claimRoot(t)
	var delivered []int64
	refused := func(agent string, code contract.Code) {
		t.Helper()
		ans := f.ask(t, root.Conversation, agent, "x", delivered...)
		delivered = append(delivered, ans.Meta.Ordinal)
		if ans.Result.ErrorCode != code || !strings.Contains(ans.Result.Teaching, " ") {
			t.Fatalf("ask of %s = %s %q, want %s", agent, ans.Result.ErrorCode, ans.Result.Teaching, code)
		}
	}
	refused("calc", contract.CodeAskRefused)
	refused("nobody", contract.CodeAskRefused)
	for range contract.MaxAskFanOut {
		ans := f.ask(t, root.Conversation, "writer", "Draft.", delivered...)
		delivered = append(delivered, ans.Meta.Ordinal)
		if state(ans) != contract.OpRunning {
			t.Fatalf("ask = %s %q", ans.Result.ErrorCode, ans.Result.Teaching)
		}
	}
	refused("writer", contract.CodeAskFanOut)

	// writer, asked at depth 1, asks on down to the bound.
	asker, from := f.writer, root.ID
	seen := map[string][]int64{f.agent.ID: delivered}
	for depth := 1; depth <= contract.MaxAskDepth; depth++ {
		next := f.childOf(t, asker.Name, from)
		c, err := f.a.ClaimTask(t.Context(), asker, contract.TaskClaimRequest{Task: next.ID})
		if err != nil || c.Task == nil || c.Task.Parent == nil || c.Task.Parent.Depth != depth {
			t.Fatalf("claim at depth %d = %+v, %v", depth, c, err)
		}
		in := &contract.ApplyActionInput{Action: contract.ActionAsk, Params: contract.Args{"agent": contract.StringValue("calc"), "task": contract.StringValue("deeper")}}
		if asker.ID == f.agent.ID {
			in.Params["agent"] = contract.StringValue("writer")
		}
		was := seen[asker.ID]
		ans, err := f.ops.Call(t.Context(), asker, operation.Call{Tool: contract.ToolApplyAction, Input: in, Conversation: c.Task.Conversation,
			Delivered: func(o int64) bool { return contains(was, o) }})
		if err != nil {
			t.Fatal(err)
		}
		seen[asker.ID] = append(was, ans.Meta.Ordinal)
		if depth == contract.MaxAskDepth {
			if ans.Result.ErrorCode != contract.CodeAskTooDeep {
				t.Fatalf("ask at depth %d = %s, want %s", depth, ans.Result.ErrorCode, contract.CodeAskTooDeep)
			}
			break
		}
		if state(ans) != contract.OpRunning && state(ans) != contract.OpWaitingForDecision {
			t.Fatalf("ask at depth %d = %s %q", depth, ans.Result.ErrorCode, ans.Result.Teaching)
		}
		if state(ans) == contract.OpWaitingForDecision {
			reqs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
			if err != nil {
				t.Fatal(err)
			}
			r := reqs[len(reqs)-1]
			if _, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictApprove}); err != nil {
				t.Fatal(err)
			}
		}
		from = next.ID
		if asker.ID == f.agent.ID {
			asker = f.writer
		} else {
			asker = f.agent
		}
	}
}

// opEntryOf returns calc's Operation ordinal from its strip.
func (f *askFixture) opEntryOf(t *testing.T, ordinal int64) contract.OperationEntry {
	t.Helper()
	st, err := f.ops.Operations().State(t.Context(), f.agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.State {
		if s.Ordinal == ordinal {
			return s.OperationEntry
		}
	}
	t.Fatalf("Operation %d is not on calc's strip %+v", ordinal, st.State)
	return contract.OperationEntry{}
}

// TestAuthority_Ask_SpendRollsUp: a model request of a task calc asked writer for counts
// against calc's Agent budget too, and a request of writer's own task does not.
func TestAuthority_Ask_SpendRollsUp(t *testing.T) {
	f := newAskFixture(t)
	ctx := t.Context()
	spec := contract.BudgetSpec{BudgetLimits: contract.BudgetLimits{Scope: "agent", Agent: "calc", Window: "total", MaxTokens: 1000}}
	if _, err := f.a.SetBudget(ctx, f.admin, "default", "calc-total", spec); err != nil {
		t.Fatal(err)
	}
	root := f.claimRoot(t)
	if ans := f.ask(t, root.Conversation, "writer", "Draft."); state(ans) != contract.OpRunning {
		t.Fatalf("ask = %s %q", ans.Result.ErrorCode, ans.Result.Teaching)
	}
	asked := f.childOf(t, "writer", root.ID)
	if c, err := f.a.ClaimTask(ctx, f.writer, contract.TaskClaimRequest{Task: asked.ID}); err != nil || c.Task == nil {
		t.Fatalf("writer's claim = %+v, %v", c, err)
	}
	model := contract.BudgetReserve{Provider: "anthropic", Model: "claude-sonnet-4-20250514", Tokens: 100}
	own, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "writer", Text: "Your own work."})
	if err != nil {
		t.Fatal(err)
	}
	alone := model
	alone.Task = own.ID
	if r, err := f.a.ReserveBudget(ctx, f.writer, alone); err != nil || !r.Granted || len(r.Budgets) != 0 {
		t.Fatalf("writer's own request = %+v, %v; want granted on no budget", r, err)
	}
	model.Task = asked.ID
	r, err := f.a.ReserveBudget(ctx, f.writer, model)
	if err != nil || !r.Granted || len(r.Budgets) != 1 {
		t.Fatalf("the asked task's request = %+v, %v; want held on calc-total", r, err)
	}
	if err := f.a.ChargeBudget(ctx, f.writer, contract.BudgetCharge{Hold: r.Hold, Provider: "anthropic", Model: "claude-sonnet-4-20250514", InputTokens: 900, OutputTokens: 100}); err != nil {
		t.Fatal(err)
	}
	if r, err := f.a.ReserveBudget(ctx, f.writer, model); err != nil || r.Granted || r.Budget != "calc-total" {
		t.Fatalf("the asked task's request past calc's budget = %+v, %v; want refused by calc-total", r, err)
	}
}

// TestAuthority_Ask_ApprovedAfterCancel: an ask waiting for a member when its asking task
// is cancelled posts nothing once approved: the approval is void, the ask refused.
func TestAuthority_Ask_ApprovedAfterCancel(t *testing.T) {
	f := newAskFixture(t)
	ctx := t.Context()
	root := f.claimRoot(t)
	ans := f.ask(t, root.Conversation, "critic", "Review.")
	if state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("uncovered ask = %s %+v", ans.Result.ErrorCode, ans.Result.Operations)
	}
	if _, err := f.a.CancelTask(ctx, f.admin, "default", root.ID); err != nil {
		t.Fatal(err)
	}
	reqs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
	if err != nil || len(reqs) != 1 {
		t.Fatalf("requests = %+v, %v", reqs, err)
	}
	got, err := f.ops.Operations().Decide(ctx, f.admin, "default", reqs[0].ID, contract.Decision{Digest: reqs[0].Digest, Verdict: contract.VerdictApprove})
	if err != nil || got.State != contract.RequestVoid {
		t.Fatalf("approval after the cancel = %+v, %v; want it void", got, err)
	}
	if op := f.opEntryOf(t, ans.Meta.Ordinal); op.State != contract.OpRefused || op.ReasonCode != contract.CodeAskRefused {
		t.Errorf("the ask after the approval = %+v, want refused %s", op, contract.CodeAskRefused)
	}
	if ts, _ := f.a.Tasks(ctx, f.admin, "default", "critic"); len(ts) != 0 {
		t.Errorf("critic has tasks %+v, want none: the asking task was cancelled", ts)
	}
}

// TestAuthority_Ask_ConcurrentAsksKeepTheFanOut: asks a class covers, made at once from one
// task, post at most MaxAskFanOut tasks: the bound is checked again in the transaction that
// posts each, so asks that each saw room before another committed are refused ask_fan_out.
func TestAuthority_Ask_ConcurrentAsksKeepTheFanOut(t *testing.T) {
	f := newAskFixture(t)
	ctx := t.Context()
	root := f.claimRoot(t)
	const n = contract.MaxAskFanOut + 4
	codes := make(chan contract.Code, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			in := &contract.ApplyActionInput{Action: contract.ActionAsk, Params: contract.Args{"agent": contract.StringValue("writer"), "task": contract.StringValue("Draft.")}}
			ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolApplyAction, Input: in, Conversation: root.Conversation,
				Delivered: func(int64) bool { return true }})
			switch {
			case err != nil:
				var ce *contract.Error
				if !errors.As(err, &ce) {
					t.Errorf("concurrent ask: %v", err)
					return
				}
				codes <- ce.Code
			case state(ans) == contract.OpRunning:
				codes <- ""
			default:
				codes <- ans.Result.ErrorCode
			}
		})
	}
	wg.Wait()
	close(codes)
	running := 0
	for c := range codes {
		switch c {
		case "":
			running++
		case contract.CodeAskFanOut:
		default:
			t.Errorf("a concurrent ask = %s, want it running or refused %s", c, contract.CodeAskFanOut)
		}
	}
	ts, err := f.a.Tasks(ctx, f.admin, "default", "writer")
	if err != nil {
		t.Fatal(err)
	}
	if running > contract.MaxAskFanOut || len(ts) != running {
		t.Errorf("%d asks running and writer has %d tasks; want at most %d, one per running ask", running, len(ts), contract.MaxAskFanOut)
	}
}

// TestAuthority_Ask_ScheduleBudgetCountsAskedTasks: a model request of a task that a
// schedule's fire's task asked for counts against that schedule's budget, as the fire's own
// task's requests do, and against the asker's Agent budget; writer's own task counts
// against neither.
func TestAuthority_Ask_ScheduleBudgetCountsAskedTasks(t *testing.T) {
	f := newAskFixture(t)
	ctx := t.Context()
	s, err := authority.NewSchedules(f.a, authority.SchedulesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := s.Create(ctx, f.admin, "default", contract.CreateScheduleRequest{Every: "1h", Missed: contract.MissedSkip,
		Task: contract.TaskRequest{Agent: "calc", Text: "Have the notes written."}})
	if err != nil {
		t.Fatal(err)
	}
	for name, lim := range map[string]contract.BudgetLimits{
		"nightly":    {Scope: "schedule", Schedule: string(sch.ID), Window: "total", MaxTokens: 1000},
		"calc-total": {Scope: "agent", Agent: "calc", Window: "total", MaxTokens: 1000},
	} {
		if _, err := f.a.SetBudget(ctx, f.admin, "default", name, contract.BudgetSpec{BudgetLimits: lim}); err != nil {
			t.Fatal(err)
		}
	}
	fire, err := s.RunNow(ctx, f.admin, "default", sch.ID)
	if err != nil || fire.Task == "" {
		t.Fatalf("RunNow = %+v, %v; want a fire with its task", fire, err)
	}
	c, err := f.a.ClaimTask(ctx, f.agent, contract.TaskClaimRequest{Task: fire.Task})
	if err != nil || c.Task == nil {
		t.Fatalf("claim of the fire's task = %+v, %v", c, err)
	}
	if ans := f.ask(t, c.Task.Conversation, "writer", "Draft."); state(ans) != contract.OpRunning {
		t.Fatalf("ask = %s %q", ans.Result.ErrorCode, ans.Result.Teaching)
	}
	asked := f.childOf(t, "writer", fire.Task)
	if c, err := f.a.ClaimTask(ctx, f.writer, contract.TaskClaimRequest{Task: asked.ID}); err != nil || c.Task == nil {
		t.Fatalf("writer's claim = %+v, %v", c, err)
	}
	own, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "writer", Text: "Your own work."})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		task contract.TaskID
		want []string
	}{
		{"the asked task", asked.ID, []string{"calc-total", "nightly"}},
		{"writer's own task", own.ID, nil},
	} {
		r, err := f.a.ReserveBudget(ctx, f.writer, contract.BudgetReserve{Task: tt.task, Provider: "openai", Model: "gpt-4o", Tokens: 1})
		if err != nil || !r.Granted {
			t.Fatalf("%s: reserve = %+v, %v", tt.name, r, err)
		}
		got := slices.Clone(r.Budgets)
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: budgets counted %q, want %q", tt.name, got, tt.want)
		}
	}
	// A task of another Agent is none of the caller's to spend on.
	if _, err := f.a.ReserveBudget(ctx, f.writer, contract.BudgetReserve{Task: fire.Task, Provider: "openai", Model: "gpt-4o", Tokens: 1}); err == nil {
		t.Error("writer reserved against calc's task; want it refused")
	}
}
