package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// fakeHolder grants the first room reservations and refuses the rest, as a budget with
// that much room would; it keeps what was reserved and charged.
type fakeHolder struct {
	mu       sync.Mutex
	room     int
	reserved []int64
	charged  map[string]agent.Usage
}

func (h *fakeHolder) Reserve(ctx context.Context, conversation string, tokens int64) (agent.Grant, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reserved = append(h.reserved, tokens)
	if len(h.reserved) > h.room {
		return agent.Grant{Budget: "daily", Teaching: "budget daily has no room"}, nil
	}
	return agent.Grant{Granted: true, Hold: "h" + string(rune('0'+len(h.reserved)))}, nil
}

func (h *fakeHolder) Charge(ctx context.Context, hold string, u agent.Usage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.charged == nil {
		h.charged = map[string]agent.Usage{}
	}
	h.charged[hold] = u
	return nil
}

// TestLoop_Send_AsksTheBudgetsBeforeEachRequest: the loop reserves before each model
// request, at least the answer's bound, and charges each with the usage the provider
// reported; a refused reservation ends the run before the request is sent, with
// budget_exhausted naming the budget, and a later run of the conversation goes on where
// it stopped once the budget has room.
func TestLoop_Send_AsksTheBudgetsBeforeEachRequest(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"}]},{"calls":[{"tool":"QueryBoard"}]},{"final":"ok"}]}`)
	p.usage = agent.Usage{InputTokens: 300, OutputTokens: 20}
	h := &fakeHolder{room: 2}
	l := r.loop(t, p, func(c *agent.LoopConfig) { c.Budgets, c.MaxTokens = h, 1000 })
	_, err := l.Send(t.Context(), "c1", "go")
	be, ok := errors.AsType[*agent.BudgetExhaustedError](err)
	if !ok || be.Budget != "daily" || contract.CodeOf(err) != contract.CodeBudgetExhausted {
		t.Fatalf("Send error = %v, want budget_exhausted by daily", err)
	}
	if n := len(p.requests()); n != 2 {
		t.Fatalf("the model was asked %d times, want 2: the third request was refused", n)
	}
	if diff := cmp.Diff(map[string]agent.Usage{"h1": p.usage, "h2": p.usage}, h.charged); diff != "" {
		t.Errorf("charges (-want +got):\n%s", diff)
	}
	for i, tokens := range h.reserved {
		if tokens <= 1000 {
			t.Errorf("reservation %d held %d tokens, want the answer's bound (1000) and the request's input", i, tokens)
		}
	}

	h.room = 10
	out, err := l.Send(t.Context(), "c1", "")
	if err != nil || !strings.HasSuffix(out.Final, "ok") {
		t.Fatalf("resumed Send = %+v, %v; want the final answer", out, err)
	}
	if n := len(p.requests()); n != 3 {
		t.Errorf("the model was asked %d times in all, want 3: the stopped request once, after the raise", n)
	}
}
