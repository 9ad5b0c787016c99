package agent_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
)

// TestLoop_Send_RecordsEachModelTurn: every assistant message the loop saves names the
// model turn that wrote it — the provider and model, the stop reason, the usage, the
// latency on the injected clock and the digest of the request sent — and not the content.
func TestLoop_Send_RecordsEachModelTurn(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"}]},{"final":"done"}]}`)
	p.usage = agent.Usage{InputTokens: 120, OutputTokens: 7}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { at = at.Add(250 * time.Millisecond); return at }
	if _, err := r.loop(t, p, func(c *agent.LoopConfig) { c.Now = clock }).Send(t.Context(), "c1", "look at the board"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	c, err := r.store.Load(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	var got []agent.Turn
	for _, m := range c.Messages {
		if m.Role == agent.RoleAssistant {
			if m.Turn == nil {
				t.Fatalf("assistant message %+v names no model turn", m)
			}
			got = append(got, *m.Turn)
		}
	}
	var want []agent.Turn
	for i, stop := range []agent.StopReason{agent.StopToolUse, agent.StopEnd} {
		sent, err := json.Marshal(reqs[i])
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, agent.Turn{Model: p.Name(), Stop: stop, Usage: p.usage, LatencyMS: 250,
			Sent: fmt.Sprintf("sha256:%x", sha256.Sum256(sent))})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model turns recorded (-want +got):\n%s", diff)
	}
}
