package authority_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// opsFixture is an authority on SQLite with member ada, the ops capability and one Agent.
type opsFixture struct {
	st    store.Store
	a     *authority.Authority
	ops   *authority.Operations
	clock *authoritytest.Clock
	admin identity.Caller
	agent identity.Caller
}

func newOpsFixture(t *testing.T, hold time.Duration) *opsFixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return opsFixtureOver(t, st, hold)
}

// opsFixtureOver is the ops capability installed over st, with the Agent calc, its clock
// at a fixed time and the given hold bound.
func opsFixtureOver(t *testing.T, st store.Store, hold time.Duration) *opsFixture {
	t.Helper()
	f := &opsFixture{st: st, clock: authoritytest.NewClock(time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC))}
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{7}, Now: f.clock.Now, Capability: "testdata/ops", Agent: "calc"})
	f.a, f.admin, f.agent = p.A, p.Admin, p.Agent
	f.ops = authority.NewOperations(f.a, operation.Config{HoldBound: hold, RequestTTL: time.Hour})
	return f
}

func (f *opsFixture) call(t *testing.T, ops *authority.Operations, in any, delivered ...int64) operation.Answer {
	t.Helper()
	tool := map[string]string{"*contract.ApplyActionInput": contract.ToolApplyAction, "*contract.Batch": contract.ToolApplyBatch}
	name := tool[typeName(in)]
	ans, err := ops.Call(t.Context(), f.agent, operation.Call{Tool: name, Input: in,
		Delivered: func(o int64) bool { return contains(delivered, o) }})
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	return ans
}

func typeName(v any) string {
	switch v.(type) {
	case *contract.ApplyActionInput:
		return "*contract.ApplyActionInput"
	case *contract.Batch:
		return "*contract.Batch"
	}
	return ""
}

func contains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func state(ans operation.Answer) contract.OperationState {
	if len(ans.Result.Operations) == 0 {
		return ""
	}
	return ans.Result.Operations[0].State
}

// TestOperations_HeldAcrossInstances shows that a held call finds its outcome through the
// store: the Operation settles through another Authority over the same store.
func TestOperations_HeldAcrossInstances(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	otherOps := authority.NewOperations(other, operation.Config{})
	held := make(chan contract.OperationSlot, 4)
	done := make(chan operation.Answer, 1)
	go func() {
		ans, err := f.ops.Call(context.Background(), f.agent, operation.Call{Tool: contract.ToolApplyAction,
			Input:    &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a")}},
			Progress: func(s contract.OperationSlot) { held <- s }})
		if err != nil {
			t.Error(err)
		}
		done <- ans
	}()
	if s := <-held; s.State != contract.OpRunning || s.Ordinal != 1 {
		t.Fatalf("first progress = %+v, want running ordinal 1", s)
	}
	// The other instance's worker reports the outcome.
	authoritytest.NewWorker(t, other, f.admin, otherOps, authoritytest.WorkerOptions{
		Sources: []contract.Source{{Name: "workspace", Type: "file", Words: []string{"fetched"}, Tier: contract.TierAttested}},
		Tools:   fetchTool,
	}).Settle(t, f.agent.ID, 1, contract.Args{"path": contract.StringValue("a")})
	if ans := <-done; state(ans) != contract.OpDone || ans.Meta.Ordinal != 1 {
		t.Errorf("held call = %+v, want done", ans.Result.Operations)
	}
}

func TestOperations_RequestExpires(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	ans := f.call(t, f.ops, &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("a")}})
	if state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("state = %s, want waiting_for_decision", state(ans))
	}
	rs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
	if err != nil || len(rs) != 1 {
		t.Fatal(rs, err)
	}
	f.clock.Add(2 * time.Hour)
	if rs, _ := f.ops.Operations().Requests(t.Context(), f.admin, "default"); rs[0].State != contract.RequestExpired {
		t.Errorf("listed state past the deadline = %s, want expired", rs[0].State)
	}
	_, err = f.ops.Operations().Decide(t.Context(), f.admin, "default", rs[0].ID, contract.Decision{Digest: rs[0].Digest, Verdict: contract.VerdictApprove})
	wantCode(t, err, contract.CodeRequestClosed)
	ans = f.call(t, f.ops, &contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
		Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue("1")}}}}})
	if ans.Result.ErrorCode != contract.CodePreviousResultUndelivered || ans.Result.Operations[0].State != contract.OpRefused {
		t.Errorf("next write = %s %+v, want previous_result_undelivered carrying the refused operation", ans.Result.ErrorCode, ans.Result.Operations)
	}
}

func TestOperations_ChangedCallVoidsApproval(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	member := f.admin.Principal()
	target := func(addr string) contract.Batch {
		return contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact, NodeID: "target-" + addr[:1],
			Atom: &contract.Atom{Predicate: "target", Args: contract.Args{"addr": contract.StringValue(addr)}}}}}
	}
	put := func(b contract.Batch, retract string) {
		t.Helper()
		if retract != "" {
			b.Operations = append([]contract.Operation{{Op: contract.OpRetractNode, NodeID: retract}}, b.Operations...)
		}
		err := f.a.Commit(t.Context(), "default", member, func(bd *board.Board) (boards.Change, error) {
			res, err := bd.ApplyBatch(board.Author{Principal: member, Tier: contract.TierAttested}, b)
			return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, err
		})
		if err != nil {
			t.Fatalf("member batch: %v", err)
		}
	}
	put(target("a@x"), "")
	ans := f.call(t, f.ops, &contract.ApplyActionInput{Action: "send"})
	if state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("send = %s %s %+v, want waiting_for_decision", ans.Result.ErrorCode, ans.Result.Teaching, ans.Result.Operations)
	}
	rs, _ := f.ops.Operations().Requests(t.Context(), f.admin, "default")
	if got := rs[0].Vector.Args["addr"]; got != contract.StringValue("a@x") {
		t.Fatalf("request vector addr = %v, want the bound a@x", got)
	}
	put(target("b@x"), "target-a") // the trusted premise changes before the decision
	got, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", rs[0].ID, contract.Decision{Digest: rs[0].Digest, Verdict: contract.VerdictApprove})
	if err != nil || got.State != contract.RequestVoid {
		t.Fatalf("Decide = %+v, %v; want the request void", got, err)
	}
	st, err := f.ops.Operations().State(t.Context(), f.agent)
	if err != nil {
		t.Fatal(err)
	}
	if e := st.State[0]; e.State != contract.OpRefused || e.Ordinal != 1 {
		t.Errorf("operation after a changed call = %+v, want refused", e)
	}
}

func TestOperations_ApprovedExecutionIsQueued(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	f.target(t, "a@x")
	f.call(t, f.ops, &contract.ApplyActionInput{Action: "send"})
	rs, _ := f.ops.Operations().Requests(t.Context(), f.admin, "default")
	if _, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", rs[0].ID, contract.Decision{Digest: rs[0].Digest, Verdict: contract.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	st, _ := f.ops.Operations().State(t.Context(), f.agent)
	if e := st.State[0]; e.State != contract.OpRunning || e.Stage != contract.StageNotDispatched {
		t.Errorf("approved executed Action = %+v, want running not_dispatched (queued for a worker)", e)
	}
	q, err := f.ops.Operations().Queued(t.Context(), "default")
	if err != nil || len(q) != 1 || q[0].Ordinal != 1 || q[0].Request.Tool != "test.send@1" || q[0].Request.Args["addr"] != contract.StringValue("a@x") ||
		q[0].Approved == nil || q[0].Approved.Args["addr"] != contract.StringValue("a@x") {
		t.Fatalf("Queued = %+v, %v; want the approved send with its bound address", q, err)
	}
	if err := f.ops.Dispatched(t.Context(), "default", f.agent.ID, 1); err != nil {
		t.Fatal(err)
	}
	st, _ = f.ops.Operations().State(t.Context(), f.agent)
	if e := st.State[0]; e.Stage != contract.StageAtWorker {
		t.Errorf("after dispatch = %+v, want at_worker", e)
	}
	if q, _ := f.ops.Operations().Queued(t.Context(), "default"); len(q) != 0 {
		t.Errorf("Queued after dispatch = %+v, want none", q)
	}
}

// TestOperations_VectorBindsToolAndSource shows the request vector names the Tool's
// locked digest and its Source record, and that a lock changed before the decision voids
// the approval.
func TestOperations_VectorBindsToolAndSource(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	ctx := t.Context()
	if _, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "w1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().BindSource(ctx, f.admin, "default", "w1", contract.Source{Name: "workspace", Type: "file", Words: []string{"fetched"}, Tier: contract.TierAttested}); err != nil {
		t.Fatal(err)
	}
	lock := func(hexDigit string) {
		t.Helper()
		d := "sha256:"
		for range 64 {
			d += hexDigit
		}
		if _, err := f.a.LockTool(ctx, f.admin, "default", "w1", contract.ToolLock{Tool: "test.send@1", Digest: d}); err != nil {
			t.Fatal(err)
		}
	}
	lock("a")
	f.target(t, "a@x")
	f.call(t, f.ops, &contract.ApplyActionInput{Action: "send"})
	rs, _ := f.ops.Operations().Requests(ctx, f.admin, "default")
	v := rs[0].Vector
	if v.ToolDigest != "sha256:"+strings.Repeat("a", 64) || !strings.HasPrefix(v.Source, "workspace@sha256:") {
		t.Fatalf("vector = %+v, want the locked digest and the Source record", v)
	}
	lock("b") // the Tool is re-locked at another digest before the decision
	got, err := f.ops.Operations().Decide(ctx, f.admin, "default", rs[0].ID, contract.Decision{Digest: rs[0].Digest, Verdict: contract.VerdictApprove})
	if err != nil || got.State != contract.RequestVoid {
		t.Errorf("Decide after the Tool changed = %+v, %v; want the request void", got, err)
	}
}

// TestOperations_TraceParentInLog: the traceparent of the call that queued work is kept
// in the log with it, so another instance over the same store (or this one after a
// restart) serves the work in the call's trace.
func TestOperations_TraceParentInLog(t *testing.T) {
	tests := []struct {
		name string
		ctx  func(context.Context) context.Context
		want string
	}{
		{"traced", func(ctx context.Context) context.Context {
			return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled}))
		}, "00-01020300000000000000000000000000-0405060000000000-01"},
		{"untraced", func(ctx context.Context) context.Context { return ctx }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOpsFixture(t, time.Millisecond)
			_, err := f.ops.Call(tt.ctx(t.Context()), f.agent, operation.Call{Tool: contract.ToolApplyAction,
				Input: &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a")}}})
			if err != nil {
				t.Fatal(err)
			}
			other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
			q, err := authority.NewOperations(other, operation.Config{}).Operations().Queued(t.Context(), f.agent.Projects[0])
			if err != nil || len(q) != 1 {
				t.Fatalf("queued on the other instance = %+v (%v), want the one call", q, err)
			}
			if q[0].TraceParent != tt.want {
				t.Errorf("queued work's traceparent = %q, want %q", q[0].TraceParent, tt.want)
			}
		})
	}
}

// TestOperations_Begin shows what Begin hands back: a call answered at once comes back as
// its answer with no Held call; an admitted write comes back held, its Wait returns at the
// hold bound and its Answer says running — what Call answers for the same calls.
func TestOperations_Begin(t *testing.T) {
	f := newOpsFixture(t, 10*time.Millisecond) // every write reaches the bound: no worker runs
	fetch := func(path string) operation.Call {
		return operation.Call{Tool: contract.ToolApplyAction,
			Input: &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(path)}}}
	}
	for _, tc := range []struct {
		name     string
		call     operation.Call
		held     bool
		wantCode contract.Code // of an answer given at once
		want     contract.OperationState
	}{
		{name: "read", call: operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}}},
		{name: "write", call: fetch("a"), held: true, want: contract.OpRunning},
		{name: "write while the first runs", call: fetch("b"), wantCode: contract.CodeOperationRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ans, err := f.ops.Begin(t.Context(), f.agent, tc.call)
			if err != nil {
				t.Fatalf("Begin: %v", err)
			}
			if (h != nil) != tc.held {
				t.Fatalf("Begin held = %v, want %v", h != nil, tc.held)
			}
			if h == nil {
				if ans.Result.ErrorCode != tc.wantCode {
					t.Errorf("answer errorCode = %q, want %q", ans.Result.ErrorCode, tc.wantCode)
				}
				return
			}
			if err := h.Wait(t.Context()); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			ans, err = h.Answer(t.Context())
			if err != nil {
				t.Fatalf("Answer: %v", err)
			}
			if state(ans) != tc.want || ans.Meta.Ordinal != 1 {
				t.Errorf("held answer = %+v (ordinal %d), want %s of ordinal 1", ans.Result.Operations, ans.Meta.Ordinal, tc.want)
			}
		})
	}
}

// TestOperations_CloseEndsHeldCalls: the goroutines that follow the log for held calls
// are the driver's own, and Close closes the driver: it ends a call held on a running
// write with unavailable, returns only once the follow goroutine has stopped, and a call
// held after Close fails at once, the same way (no follow starts).
func TestOperations_CloseEndsHeldCalls(t *testing.T) {
	f := newOpsFixture(t, time.Hour) // no worker runs: only Close ends the hold
	write := operation.Call{Tool: contract.ToolApplyAction,
		Input: &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("a")}}}
	h, _, err := f.ops.Begin(t.Context(), f.agent, write)
	if err != nil || h == nil {
		t.Fatalf("Begin = %v (held %v), want a held write", err, h != nil)
	}
	done := make(chan error, 1)
	go func() { done <- h.Wait(t.Context()) }()
	// The hold registers before Wait parks; Close may come before or after, and either
	// way the hold ends with the same refusal.
	f.ops.Operations().Close()
	if err := <-done; contract.CodeOf(err) != contract.CodeUnavailable {
		t.Fatalf("a call held across Close ended with %v, want %s", err, contract.CodeUnavailable)
	}
	if err := h.Wait(t.Context()); contract.CodeOf(err) != contract.CodeUnavailable {
		t.Fatalf("a call held after Close ended with %v, want %s", err, contract.CodeUnavailable)
	}
	f.ops.Operations().Close() // twice is harmless
}
