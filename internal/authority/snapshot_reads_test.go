package authority_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// heldFetch begins the fixture's Agent's fetch of path on ops and waits out its hold,
// which ends with the fetch still running (no worker claimed it); it returns the held
// call, whose Answer the test reads.
func heldFetch(t *testing.T, f *hopFixture, ops *authority.Operations, path string) *operation.Held {
	t.Helper()
	h, ans, err := ops.Operations().Begin(t.Context(), f.agent, operation.Call{Tool: contract.ToolApplyAction,
		Input:     &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue(path)}},
		Delivered: func(int64) bool { return true }})
	if err != nil || h == nil {
		t.Fatalf("Begin(fetch) = %+v, %v; want a held call", ans.Result, err)
	}
	if err := h.Wait(t.Context()); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return h
}

// ownEntry returns the entry of the strip of ans for the call's own Operation.
func ownEntry(t *testing.T, ans operation.Answer) contract.OperationEntry {
	t.Helper()
	if ans.Meta.Ordinal == 0 || len(ans.Result.Operations) == 0 {
		t.Fatalf("the answer %+v names no Operation of its own", ans)
	}
	return ans.Result.Operations[0] // newest first: the call's own, the Agent's only one
}

// TestOperations_AnswerDuringClaim shows that the answer to an Agent's write, once its
// hold ended, does not wait for a claim that holds the project's operation ledger across
// its store transaction: it is answered meanwhile from the ledger's snapshot, with the
// call's own Operation as committed (still waiting for a worker, since the claim has not
// committed), and once the claim commits the next answer shows it at the worker
// (docs/architecture.md, "The project state and its driver").
func TestOperations_AnswerDuringClaim(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, _ := be.open(t)
			ps := &pauseStore{Store: s1}
			f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
			l := f.startup(t, "wkr-a")
			h := heldFetch(t, f, f.ops, "a.txt")
			rows := f.poll(t, l, fetchTool)
			if len(rows) != 1 {
				t.Fatalf("Poll served %d rows, want 1", len(rows))
			}
			within(t, "the fetch's answer", h.Answer) // the ledger caught up, and its snapshot published

			release, claimed := startPaused(t, ps, func() error { return f.claim(l, rows[0]) })
			during := within(t, "the fetch's answer", h.Answer)
			release()
			if err := <-claimed; err != nil {
				t.Fatalf("Claim: %v", err)
			}
			if e := ownEntry(t, during); !during.Result.Accepted || e.State != contract.OpRunning || e.Stage != contract.StageNotDispatched {
				t.Errorf("the fetch's answer during the claim's transaction is accepted %v, %+v; want accepted, running, not dispatched", during.Result.Accepted, e)
			}
			after := within(t, "the fetch's answer", h.Answer)
			if e := ownEntry(t, after); e.State != contract.OpRunning || e.Stage != contract.StageAtWorker {
				t.Errorf("the fetch's answer after the claim shows %+v, want running at the worker", e)
			}
		})
	}
}

// TestOperations_AnswerNotStale shows that the answer to a write read from the ledger's
// snapshot never answers past the head the call read: another instance over the same
// store moves the call's Operation, and the next answer of this instance shows it.
func TestOperations_AnswerNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newHopFixtureOn(t, opsFixtureOver(t, s1, time.Millisecond))
			other := authority.NewOperations(authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now}),
				operation.Config{})
			f.startup(t, "wkr-a")
			h := heldFetch(t, f, f.ops, "a.txt")
			before := within(t, "the fetch's answer", h.Answer)
			if e := ownEntry(t, before); e.Stage != contract.StageNotDispatched {
				t.Fatalf("the fetch's answer shows %+v, want it not dispatched", e)
			}
			if err := other.Dispatched(t.Context(), "default", f.agent.ID, before.Meta.Ordinal); err != nil {
				t.Fatalf("the other instance's claim: %v", err)
			}
			after := within(t, "the fetch's answer", h.Answer)
			if e := ownEntry(t, after); e.Stage != contract.StageAtWorker {
				t.Errorf("the fetch's answer after another instance's change shows %+v, want it at the worker", e)
			}
			if after.Meta.BoardRevision <= before.Meta.BoardRevision {
				t.Errorf("the fetch's answer after another instance's change is at %d, want past %d", after.Meta.BoardRevision, before.Meta.BoardRevision)
			}
		})
	}
}

// delegateFixture is an orchFixture with the docs class of the delegation policy in
// force, a member's delegate, and a Request of calc's that the class covers.
type delegateFixture struct {
	*orchFixture
	asst    identity.Caller
	covered contract.Request
}

func newDelegateFixture(t *testing.T, f *orchFixture) *delegateFixture {
	t.Helper()
	ctx := t.Context()
	dt, err := f.a.Directory().CreateDelegate(ctx, f.admin, "default", contract.CreateDelegateRequest{Name: "asst", Life: "8h"})
	if err != nil {
		t.Fatal(err)
	}
	asst, err := f.a.Directory().Authenticate(ctx, identity.Token(dt.Token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "d.toml", Text: docsDelegation}); err != nil {
		t.Fatal(err)
	}
	f.call(t, f.calc, note("docs/a.md"))
	return &delegateFixture{orchFixture: f, asst: asst, covered: f.request(t, f.calc)}
}

// covers is the delegate's check of Request id, failing the test when it does not answer
// within a few seconds.
func (f *delegateFixture) covers(t *testing.T, id contract.RequestID) bool {
	t.Helper()
	return within(t, "DelegateCovers", func(ctx context.Context) (bool, error) {
		return f.ops.Operations().DelegateCovers(ctx, f.asst, "default", id)
	})
}

// TestOperations_DelegateCoversDuringWrite shows that a delegate's check of the Request it
// is about to decide does not wait for an admission that holds the project's operation
// ledger across its store transaction: it is read meanwhile from the ledger's snapshot
// (docs/architecture.md, "The project state and its driver").
func TestOperations_DelegateCoversDuringWrite(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, _ := be.open(t)
			ps := &pauseStore{Store: s1}
			f := newDelegateFixture(t, orchFixtureOver(t, ps))
			if !f.covers(t, f.covered.ID) { // the ledger caught up, and its snapshot published
				t.Fatal("DelegateCovers under the docs class = false, want true")
			}
			release, admitted := startPaused(t, ps, func() error {
				_, err := f.ops.Call(context.Background(), f.boss, operation.Call{Tool: contract.ToolApplyAction, Input: note("docs/b.md"),
					Delivered: func(int64) bool { return true }})
				return err
			})
			during, missing := f.covers(t, f.covered.ID), f.covers(t, "req_none")
			release()
			if err := <-admitted; err != nil {
				t.Fatalf("the orchestrator's note: %v", err)
			}
			if !during {
				t.Error("DelegateCovers during the admission's transaction = false, want true")
			}
			if missing {
				t.Error("DelegateCovers of a request never raised = true, want false")
			}
		})
	}
}

// TestOperations_DelegateCoversNotStale shows that a delegate's check read from the
// ledger's snapshot never answers past the head the check read: another instance over
// the same store decides the Request, and this instance's next check finds it closed.
func TestOperations_DelegateCoversNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			s1, s2 := be.open(t)
			f := newDelegateFixture(t, orchFixtureOver(t, s1))
			other := authority.NewOperations(authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{9}}), operation.Config{})
			if !f.covers(t, f.covered.ID) {
				t.Fatal("DelegateCovers under the docs class = false, want true")
			}
			if _, err := other.Operations().Decide(t.Context(), f.admin, "default", f.covered.ID,
				contract.Decision{Digest: f.covered.Digest, Verdict: contract.VerdictDeny, Reason: "no"}); err != nil {
				t.Fatalf("the other instance's decision: %v", err)
			}
			if f.covers(t, f.covered.ID) {
				t.Error("DelegateCovers after another instance denied the request = true, want false")
			}
		})
	}
}
