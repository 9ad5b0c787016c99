package agent_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
	"github.com/docketrun/docket/internal/contract"
)

// TestLoop_Send_RecordsEachModelTurn: every assistant message the loop saves names the
// model turn that wrote it — the provider and model, the stop reason, the usage, the
// latency on the injected clock, the provider's request id and the digest of the request sent — and not the content.
func TestLoop_Send_RecordsEachModelTurn(t *testing.T) {
	r := newRig(t)
	p := script(t, `{"turns":[{"calls":[{"tool":"QueryBoard"}]},{"final":"done"}]}`)
	p.usage = agent.Usage{InputTokens: 120, OutputTokens: 7}
	p.requestID = "req_1"
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
		want = append(want, agent.Turn{Model: p.Name(), RequestID: "req_1", Stop: stop, Usage: p.usage, LatencyMS: 250,
			Sent: fmt.Sprintf("sha256:%x", sha256.Sum256(sent))})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model turns recorded (-want +got):\n%s", diff)
	}
}

// TestLoop_Send_ResultNamesItsOperation: the result of a call that became an Operation
// keeps the Operation's ordinal, so the saved conversation links the Operation (its Agent
// and ordinal) to the assistant message, and so the model turn, that proposed the call; a
// read that became none keeps 0.
func TestLoop_Send_ResultNamesItsOperation(t *testing.T) {
	r := newRig(t)
	r.gw.Reply = func(c gatewaytest.Call) gatewaytest.Reply {
		if c.Tool == "OpenCase" {
			return gatewaytest.Reply{Result: json.RawMessage(`{"caseId":"case-1","root":"n1"}`)}
		}
		return gatewaytest.Reply{}
	}
	p := script(t, `{"turns":[{"calls":[{"tool":"OpenCase","arguments":{"caseType":"calc"}},{"tool":"QueryBoard"}]},{"final":"done"}]}`)
	if _, err := r.loop(t, p, nil).Send(t.Context(), "c1", "open a case"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	c, err := r.store.Load(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	var proposer *agent.Message
	ordinals := map[string]int64{}
	for i, m := range c.Messages {
		if m.Role == agent.RoleAssistant && len(m.Calls) > 0 {
			proposer = &c.Messages[i]
		}
		for _, res := range m.Results {
			ordinals[res.CallID] = res.Ordinal
		}
	}
	if proposer == nil || proposer.Turn == nil || len(proposer.Calls) != 2 {
		t.Fatalf("no assistant message with the two calls and its turn in %+v", c.Messages)
	}
	open, query := proposer.Calls[0], proposer.Calls[1]
	if ordinals[open.ID] <= 0 {
		t.Errorf("OpenCase's result has ordinal %d, want its Operation's", ordinals[open.ID])
	}
	if ordinals[query.ID] != 0 {
		t.Errorf("QueryBoard's result has ordinal %d, want 0: a read becomes no Operation", ordinals[query.ID])
	}

	// The console and case show read the saved messages with contract.ProposersOf.
	saved := contract.Conversation{ID: "c1"}
	for _, m := range c.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		saved.Messages = append(saved.Messages, b)
	}
	want := map[int64]contract.Proposer{ordinals[open.ID]: {Conversation: "c1", Turn: 1, Model: p.Name()}}
	if diff := cmp.Diff(want, contract.ProposersOf(saved)); diff != "" {
		t.Errorf("ProposersOf the saved conversation (-want +got):\n%s", diff)
	}
}
