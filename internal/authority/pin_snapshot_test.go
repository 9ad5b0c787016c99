package authority_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// TestTasks_PinDuringClaim shows that a conversation's pin, which every tool call made in
// a conversation reads, does not wait for a claim holding the project's log across its
// store transaction: the task ledger is a part of the project log the operation ledger
// joins, and the read answers from what the ledger published when that covers the head
// the read made (docs/architecture.md, "The project state and its driver").
func TestTasks_PinDuringClaim(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	ctx := t.Context()
	if _, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x", Conversation: "p-1"}); err != nil {
		t.Fatal(err)
	}
	l, row := servedFetch(t, f)

	release, claimed := startPaused(t, ps, func() error { return f.claim(l, row) })
	by, err := answerWithin(t, "ConversationPin", func() ([]contract.Principal, error) {
		_, by, err := f.a.ConversationPin(context.Background(), f.agent, "p-1")
		return by, err
	})
	release()
	if err != nil || len(by) != 1 || by[0] != f.admin.Principal() {
		t.Errorf("ConversationPin during the claim's transaction = %v, %v; want posted by %s", by, err, f.admin.Principal())
	}
	if err := <-claimed; err != nil {
		t.Fatalf("Claim: %v", err)
	}
}

// TestTasks_PinNotStale shows that what the task ledger published never answers past
// the head a pin's read made: once another instance over the same store pins a
// conversation, this instance, whose published ledger stands before that post, reads
// the new pin at its next read, on both backends.
func TestTasks_PinNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			f, other := twoInstances(t, be.open)
			ctx := t.Context()
			if _, err := f.a.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "x", Conversation: "n-1"}); err != nil {
				t.Fatal(err)
			}
			if pin, _, err := f.a.ConversationPin(ctx, f.agent, "n-1"); err != nil || pin.CaseType != "" {
				t.Fatalf("pin before = %+v, %v; want none", pin, err)
			}
			key := contract.Args{"topic": contract.StringValue("calc-001")}
			if _, err := other.PostTask(ctx, f.admin, "default", contract.TaskRequest{Agent: "calc", Text: "y", Conversation: "n-1", CaseType: "exploration", BusinessKey: key}); err != nil {
				t.Fatal(err)
			}
			pin, _, err := f.a.ConversationPin(ctx, f.agent, "n-1")
			if err != nil || pin.CaseType != "exploration" {
				t.Errorf("pin after another instance pinned it = %+v, %v; want exploration", pin, err)
			}
		})
	}
}
