package authority_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// failed runs the queued work id through the worker hop to a failure the worker reports.
func (f *hopFixture) failed(t *testing.T, l *contract.Lease, id string) {
	t.Helper()
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("Poll served %+v, want work %s", rows, id)
	}
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Report(t.Context(), f.conn, contract.ReportRequest{ID: id, OK: false, Code: "io", Reason: "disk full",
		WorkerID: l.WorkerID, Generation: l.Generation, Grant: rows[0].Grant}); err != nil {
		t.Fatal(err)
	}
}

func retryIn(op, reason string) *contract.ApplyActionInput {
	return &contract.ApplyActionInput{Action: contract.ActionRetry, Params: contract.Args{"operation": contract.StringValue(op), "reason": contract.StringValue(reason)}}
}

// TestRecovery_Retry: under the built-in recovery policy an orchestrator retries a known
// failure as a new Operation, up to max_attempts = 3; the next act raises a recovery
// request only a member decides, void once the Operation moves.
func TestRecovery_Retry(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	boss := newOrchestrator(t, f.a, f.admin, "boss")
	retry := func(op string) operation.Answer {
		t.Helper()
		ans, err := f.ops.Call(ctx, boss, operation.Call{Tool: contract.ToolApplyAction, Input: retryIn(op, "the disk was cleaned")})
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	l := f.startup(t, "wkr-a")
	id := f.fetch(t, "a.txt")
	if ans := retry(id); ans.Result.ErrorCode != contract.CodeNotRetryable {
		t.Errorf("a retry of running work = %s, want not_retryable", ans.Result.ErrorCode)
	}
	f.failed(t, l, id)
	for attempt := int64(2); attempt <= 3; attempt++ {
		ans := retry(id)
		if !ans.Result.Accepted {
			t.Fatalf("attempt %d = %s %s, want the retry", attempt, ans.Result.ErrorCode, ans.Result.Teaching)
		}
		next := operation.WorkID(f.agent.ID, attempt)
		if ans := retry(id); ans.Result.ErrorCode != contract.CodeNotRetryable && ans.Result.ErrorCode != contract.CodeOperationRunning {
			t.Errorf("a second retry of %s = %s, want refused", id, ans.Result.ErrorCode)
		}
		f.failed(t, l, next)
		id = next
	}
	// A fourth attempt is past max_attempts: a recovery request, which boss cannot decide.
	ans := retry(id)
	if !ans.Result.Accepted {
		t.Fatalf("the fourth act = %s %s", ans.Result.ErrorCode, ans.Result.Teaching)
	}
	if q, _ := f.ops.Operations().Queued(ctx, "default"); len(q) != 0 {
		t.Fatalf("the act outside the policy queued %+v", q)
	}
	rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
	if err != nil || len(rs) != 1 || !rs[0].Recovery || rs[0].RequestedBy != boss.Principal() {
		t.Fatalf("requests = %+v, %v; want one recovery request by boss", rs, err)
	}
	rr := rs[0]
	decide := &contract.ApplyActionInput{Action: contract.ActionDecide, Params: contract.Args{"request": contract.StringValue(string(rr.ID)),
		"digest": contract.StringValue(rr.Digest), "verdict": contract.StringValue("approve")}}
	if ans, err := f.ops.Call(ctx, boss, operation.Call{Tool: contract.ToolApplyAction, Input: decide}); err != nil || ans.Result.ErrorCode == "" {
		t.Errorf("the orchestrator deciding a recovery request = %s, %v; want refused", ans.Result.ErrorCode, err)
	}
	got, err := f.ops.Operations().Decide(ctx, f.admin, "default", rr.ID, contract.Decision{Digest: rr.Digest, Verdict: contract.VerdictApprove})
	if err != nil || got.State != contract.RequestApproved {
		t.Fatalf("a member's approval = %+v, %v", got, err)
	}
	if q, _ := f.ops.Operations().Queued(ctx, "default"); len(q) != 1 || q[0].Ordinal != 4 {
		t.Fatalf("after the approval Queued = %+v, want attempt 4 as operation 4", q)
	}
	f.failed(t, l, operation.WorkID(f.agent.ID, 4))

	// A recovery request is void once the Operation moves: here a member retries first.
	retry(operation.WorkID(f.agent.ID, 4))
	rs, _ = f.ops.Operations().Requests(ctx, f.admin, "default")
	rr = rs[len(rs)-1]
	if _, err := f.ops.Operations().Retry(ctx, f.admin, "default", operation.WorkID(f.agent.ID, 4), contract.RetryRequest{Reason: "I checked"}); err != nil {
		t.Fatalf("a member's retry = %v", err)
	}
	got, err = f.ops.Operations().Decide(ctx, f.admin, "default", rr.ID, contract.Decision{Digest: rr.Digest, Verdict: contract.VerdictApprove})
	if err != nil || got.State != contract.RequestVoid {
		t.Errorf("approving the recovery request after the Operation moved = %+v, %v; want void", got, err)
	}
	if q, _ := f.ops.Operations().Queued(ctx, "default"); len(q) != 1 || q[0].Ordinal != 5 {
		t.Errorf("Queued = %+v, want only the member's retry, operation 5", q)
	}
	// Every act and refusal is an event naming the act, the Operation, the actor, the
	// reason, the policy version and the result.
	evs, err := f.st.Events(ctx, "default", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var acted, refused int
	for _, e := range evs {
		switch e.Type {
		case event.RecoveryActed:
			acted++
		case event.RecoveryRefused:
			refused++
			if !strings.Contains(string(e.Data), `"policyVersion":1`) || !strings.Contains(string(e.Data), `"reason":`) {
				t.Errorf("recovery.refused data %s lacks the policy version or the reason", e.Data)
			}
		}
	}
	// acted: attempts 2 and 3, the approved 4, the member's 5; refused: running work, two
	// second retries, past max_attempts twice.
	if acted != 4 || refused != 5 {
		t.Errorf("recovery events: %d acted, %d refused; want 4 and 5", acted, refused)
	}
}

// TestRecovery_AuthorityRetries: under a recovery policy with retry_by = "authority" the
// authority's own sweep retries an Agent's latest known failure as a new Operation up to
// max_attempts, then records once that it does not retry; it leaves alone a failure from
// before the policy, a worker's refusal and anything under the built-in policy. Each act
// is an event naming the act, the Operation, the actor (authority), the reason, the
// policy version and the result. On SQLite and PostgreSQL.
func TestRecovery_AuthorityRetries(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			st, _ := be.open(t)
			f := newHopFixtureOn(t, newOpsFixtureOn(t, st))
			ctx := t.Context()
			sweep := func(want int) {
				t.Helper()
				if n, err := f.ops.Operations().SweepRetries(ctx); err != nil || n != want {
					t.Fatalf("SweepRetries = %d, %v; want %d", n, err, want)
				}
			}
			var delivered []int64
			fetch := func(path string) string {
				t.Helper()
				ans := f.call(t, f.ops, &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(path)}}, delivered...)
				if state(ans) != contract.OpRunning {
					t.Fatalf("fetch = %s %+v, want running", ans.Result.ErrorCode, ans.Result.Operations)
				}
				return operation.WorkID(f.agent.ID, ans.Meta.Ordinal)
			}
			l := f.startup(t, "wkr-a")
			f.failed(t, l, fetch("a.txt")) // operation 1
			delivered = append(delivered, 1)
			sweep(0) // the built-in policy leaves recovery to orchestrators and members

			f.clock.Add(time.Minute)
			if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "r.toml",
				Text: "[recovery_policy]\nmax_attempts = 2\nretry_by = \"authority\"\n"}); err != nil {
				t.Fatal(err)
			}
			sweep(0) // operation 1 failed before this policy was published

			f.clock.Add(time.Minute)
			l = f.startup(t, "wkr-a")      // the lease expired meanwhile
			f.failed(t, l, fetch("b.txt")) // operation 2
			sweep(1)                       // retried as operation 3, attempt 2
			sweep(0)                       // the retry runs
			q, err := f.ops.Operations().Queued(ctx, "default")
			if err != nil || len(q) != 1 || q[0].Ordinal != 3 || q[0].Request.Args["path"].Str() != "b.txt" {
				t.Fatalf("Queued after the authority's retry = %+v, %v; want operation 3 fetching b.txt", q, err)
			}
			f.failed(t, l, operation.WorkID(f.agent.ID, 3))
			sweep(1) // attempt 3 is past max_attempts = 2: recorded, not retried
			sweep(0) // and recorded once
			if q, _ := f.ops.Operations().Queued(ctx, "default"); len(q) != 0 {
				t.Fatalf("the sweep queued %+v past max_attempts", q)
			}

			// A worker's refusal is not the authority's to re-queue.
			delivered = append(delivered, 2, 3)
			id := fetch("c.txt") // operation 4
			rows := f.poll(t, l, fetchTool)
			if err := f.claim(l, rows[0]); err != nil {
				t.Fatal(err)
			}
			if _, err := f.d.Report(ctx, f.conn, contract.ReportRequest{ID: id, OK: false, Code: contract.CodeWorkRefused, Reason: "not in the manifest",
				WorkerID: l.WorkerID, Generation: l.Generation, Grant: rows[0].Grant}); err != nil {
				t.Fatal(err)
			}
			sweep(0)

			evs, err := f.st.Events(ctx, "default", 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range evs {
				if e.Type != event.RecoveryActed && e.Type != event.RecoveryRefused {
					continue
				}
				var r event.Recovery
				if err := json.Unmarshal(e.Data, &r); err != nil {
					t.Fatal(err)
				}
				if r.Actor != "authority" || e.Actor != "authority" || r.Policy != 2 || !strings.Contains(r.Reason, "retry_by") {
					t.Errorf("%s %s: actor %q (event %q), policy %d, reason %q; want the authority under version 2", e.Type, e.Data, r.Actor, e.Actor, r.Policy, r.Reason)
				}
				got = append(got, e.Type+" "+r.Act+" "+strings.TrimPrefix(r.Operation, f.agent.ID)+": "+r.Result)
			}
			want := []string{
				"recovery.acted retry .2: retried as " + operation.WorkID(f.agent.ID, 3),
				"recovery.refused retry .3: not retried: attempt 3 is past max_attempts = 2 of the recovery policy (version 2)",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("recovery events (-want +got):\n%s", diff)
			}
		})
	}
}

// delegateRetries makes a delegate of f's member and returns its retry, which fails the
// test on an error, and the delegate.
func delegateRetries(t *testing.T, f *hopFixture) (func(op string) contract.RecoveryOutcome, identity.Caller) {
	t.Helper()
	dt, err := f.a.Directory().CreateDelegate(t.Context(), f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "8h"})
	if err != nil {
		t.Fatal(err)
	}
	asst, err := f.a.Directory().Authenticate(t.Context(), identity.Token(dt.Token))
	if err != nil {
		t.Fatal(err)
	}
	return func(op string) contract.RecoveryOutcome {
		t.Helper()
		out, err := f.ops.Operations().Retry(t.Context(), asst, "default", op, contract.RetryRequest{Reason: "the disk was cleaned"})
		if err != nil {
			t.Fatalf("the delegate's retry of %s: %v", op, err)
		}
		return out
	}, asst
}

// heldForAMember fails the test unless out raised a pending recovery request by asst and
// queued nothing; it returns the request.
func (f *hopFixture) heldForAMember(t *testing.T, asst identity.Caller, out contract.RecoveryOutcome) contract.Request {
	t.Helper()
	if out.Retry != "" || out.Request == "" {
		t.Fatalf("the delegate's act = %+v, want a recovery request and no retry", out)
	}
	if q, err := f.ops.Operations().Queued(t.Context(), "default"); err != nil || len(q) != 0 {
		t.Fatalf("the act outside the policy queued %+v, %v", q, err)
	}
	rs, err := f.ops.Operations().Requests(t.Context(), f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.ID == out.Request {
			if !r.Recovery || r.RequestedBy != asst.Principal() || r.State != contract.RequestPending {
				t.Fatalf("request %s = %+v, want a pending recovery request by the delegate", r.ID, r)
			}
			return r
		}
	}
	t.Fatalf("no request %s", out.Request)
	return contract.Request{}
}

// TestRecovery_DelegateHeldToThePolicy: a member's delegate retries within the recovery
// policy as an orchestrator does: past max_attempts its act queues nothing and raises a
// recovery request that only a member acting itself decides — the delegate's own decision
// of it is refused. Before, the delegate ran attempt 4 of max_attempts = 3.
func TestRecovery_DelegateHeldToThePolicy(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	retry, asst := delegateRetries(t, f)
	l := f.startup(t, "wkr-a")
	id := f.fetch(t, "a.txt")
	f.failed(t, l, id)
	for attempt := int64(2); attempt <= 3; attempt++ {
		out := retry(id)
		if out.Retry == "" || out.Attempt != attempt {
			t.Fatalf("attempt %d = %+v, want a retry inside max_attempts = 3", attempt, out)
		}
		id = operation.WorkID(f.agent.ID, attempt)
		f.failed(t, l, id)
	}
	rr := f.heldForAMember(t, asst, retry(id))
	if _, err := f.ops.Operations().Decide(ctx, asst, "default", rr.ID, contract.Decision{Digest: rr.Digest, Verdict: contract.VerdictApprove}); err == nil {
		t.Error("the delegate decided its own recovery request")
	}
	got, err := f.ops.Operations().Decide(ctx, f.admin, "default", rr.ID, contract.Decision{Digest: rr.Digest, Verdict: contract.VerdictApprove})
	if err != nil || got.State != contract.RequestApproved {
		t.Fatalf("the member's approval = %+v, %v", got, err)
	}
	if q, _ := f.ops.Operations().Queued(ctx, "default"); len(q) != 1 || q[0].Ordinal != 4 {
		t.Errorf("after the member's approval Queued = %+v, want attempt 4 as operation 4", q)
	}
}

// TestRecovery_DelegateNeverRerunsAnApproval: a call that ran under a person's approval
// ran once; a delegate's retry of it raises a recovery request for a member.
func TestRecovery_DelegateNeverRerunsAnApproval(t *testing.T) {
	f := newHopFixture(t)
	retry, asst := delegateRetries(t, f)
	f.approvedSend(t)
	l := f.startup(t, "wkr-a")
	rows := f.poll(t, l, sendTool(sendDigest))
	if len(rows) != 1 {
		t.Fatalf("Poll served %d rows of the approved send, want 1", len(rows))
	}
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Report(t.Context(), f.conn, contract.ReportRequest{ID: rows[0].ID, OK: false, Code: "io", Reason: "refused by the server",
		WorkerID: l.WorkerID, Generation: l.Generation, Grant: rows[0].Grant}); err != nil {
		t.Fatal(err)
	}
	f.heldForAMember(t, asst, retry(rows[0].ID))
}
