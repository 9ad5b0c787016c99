package agent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// TestLoop_FailedTurnKeepsItsAttempts: a model turn that gives up after retries is
// recorded on the conversation with each attempt of its request — provider, what failed,
// the wait after it — as a turn that succeeded after retries keeps them on its message;
// and under a budget each turn is reserved once and charged once, retried or not, so a
// retried request charges nothing twice and a turn that gave up leaves no hold.
func TestLoop_FailedTurnKeepsItsAttempts(t *testing.T) {
	rate := &agent.ProviderError{Provider: "p", Kind: agent.KindRateLimit, Status: 429, After: time.Millisecond}
	cut := &agent.ProviderError{Provider: "p", Kind: agent.KindStream, Cut: true, Message: "the stream ended without [DONE]"}
	r := newRig(t)
	f := &flaky{errs: []error{rate, cut, rate, rate}}
	h := &fakeHolder{room: 10}
	l := r.loop(t, agent.WithRetries(f, agent.RetryPolicy{Attempts: 3, Base: 2 * time.Millisecond, Rand: func() float64 { return 0 }}),
		func(c *agent.LoopConfig) { c.Budgets = h })

	_, err := l.Send(t.Context(), "c1", "go")
	if pe, ok := errors.AsType[*agent.ProviderError](err); !ok || pe.Code() != contract.CodeModelRateLimited || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("Send error = %v, want model_rate_limited after 3 attempts", err)
	}
	c, err := r.store.Load(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.FailedTurn{{Model: "flaky", After: 1, Code: contract.CodeModelRateLimited, Attempts: []agent.Retry{
		{Attempt: 1, Of: 3, Provider: "p", Kind: agent.KindRateLimit, Status: 429, WaitMS: 1, Asked: true},
		{Attempt: 2, Of: 3, Provider: "p", Kind: agent.KindStream, WaitMS: 2},
		{Attempt: 3, Of: 3, Provider: "p", Kind: agent.KindRateLimit, Status: 429},
	}}}
	if diff := cmp.Diff(want, c.Failed, cmpopts.IgnoreFields(agent.FailedTurn{}, "At", "Sent")); diff != "" {
		t.Errorf("failed turns (-want +got):\n%s", diff)
	}
	if len(c.Failed) == 1 && (c.Failed[0].At.IsZero() || !strings.HasPrefix(c.Failed[0].Sent, "sha256:")) {
		t.Errorf("failed turn = %+v, want when it gave up and the digest of what was sent", c.Failed[0])
	}
	if len(h.reserved) != 1 || len(h.charged) != 1 || h.charged["h1"] != (agent.Usage{}) {
		t.Errorf("reserved %v, charged %v; want one reservation for the three attempts, released by one charge of nothing", h.reserved, h.charged)
	}

	// The next run: one rate limit, then the answer, whose message keeps the retry.
	out, err := l.Send(t.Context(), "c1", "")
	if err != nil || out.Final != "done" {
		t.Fatalf("Send = %+v, %v; want the answer after one retry", out, err)
	}
	if c, err = r.store.Load(t.Context(), "c1"); err != nil {
		t.Fatal(err)
	}
	last := c.Messages[len(c.Messages)-1]
	if last.Turn == nil || len(last.Turn.Retries) != 1 || last.Turn.Retries[0].Kind != agent.KindRateLimit || len(c.Failed) != 1 {
		t.Errorf("answer's turn = %+v, failed turns %d; want the one retry on the answer and the failed turn kept", last.Turn, len(c.Failed))
	}
	if len(h.reserved) != 2 || len(h.charged) != 2 {
		t.Errorf("reserved %v, charged %v; want one reservation and one charge per turn", h.reserved, h.charged)
	}
}

// TestRetry_IsTheContractsModelAttempt: the record's retry reads as the wire's
// contract.ModelAttempt, field for field, so that the console and the CLI read it whole.
func TestRetry_IsTheContractsModelAttempt(t *testing.T) {
	r := agent.Retry{Attempt: 2, Of: 5, Provider: "anthropic", Kind: agent.KindServer, Status: 529, WaitMS: 1500, Asked: true}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var got contract.ModelAttempt
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%s does not decode as a contract.ModelAttempt: %v", b, err)
	}
	want := contract.ModelAttempt{Attempt: 2, Of: 5, Provider: "anthropic", Kind: "server", Status: 529, WaitMS: 1500, Asked: true}
	if got != want {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

// TestLoop_FailedTurnKeepsItsNewestAttempts: a turn that gave up after many attempts keeps
// the newest 20, numbered as they came, so the conversation's state stays small.
func TestLoop_FailedTurnKeepsItsNewestAttempts(t *testing.T) {
	rate := &agent.ProviderError{Provider: "p", Kind: agent.KindRateLimit, Status: 429, After: time.Microsecond}
	errs := make([]error, 25)
	for i := range errs {
		errs[i] = rate
	}
	r := newRig(t)
	l := r.loop(t, agent.WithRetries(&flaky{errs: errs}, agent.RetryPolicy{Attempts: 25}), nil)
	if _, err := l.Send(t.Context(), "c1", "go"); err == nil {
		t.Fatal("Send succeeded, want it to give up after 25 attempts")
	}
	c, err := r.store.Load(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Failed) != 1 || len(c.Failed[0].Attempts) != 20 || c.Failed[0].Attempts[0].Attempt != 6 || c.Failed[0].Attempts[19].Attempt != 25 {
		t.Errorf("failed turns = %+v, want one keeping attempts 6 to 25", c.Failed)
	}
}
