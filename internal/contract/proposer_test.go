package contract_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// TestProposersOf: each Operation ordinal a result names maps to the assistant message
// whose call it answers, with that message's turn; a call of a message saved without a
// turn, a result without an ordinal and a message that does not decode add nothing.
func TestProposersOf(t *testing.T) {
	t.Parallel()
	c := contract.Conversation{ID: "conv", Messages: []json.RawMessage{
		json.RawMessage(`{"role": "user", "text": "go"}`),
		json.RawMessage(`{"role": "assistant", "calls": [{"id": "a"}]}`),
		json.RawMessage(`{"role": "user", "results": [{"callId": "a", "ordinal": 1}]}`),
		json.RawMessage(`{"role": "assistant", "calls": [{"id": "b"}, {"id": "q"}], "turn": {"model": "anthropic claude-x", "requestId": "req_9"}}`),
		json.RawMessage(`{"role": "user", "results": [{"callId": "b", "ordinal": 2}, {"callId": "q"}]}`),
		json.RawMessage(`not json`),
		json.RawMessage(`{"role": "assistant", "calls": [{"id": "c"}], "turn": {"model": "openai gpt-y"}}`),
		json.RawMessage(`{"role": "user", "results": [{"callId": "c", "ordinal": 5}]}`),
	}}
	want := map[int64]contract.Proposer{
		2: {Conversation: "conv", Turn: 2, Model: "anthropic claude-x", RequestID: "req_9"},
		5: {Conversation: "conv", Turn: 3, Model: "openai gpt-y"},
	}
	got := contract.ProposersOf(c)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProposersOf (-want +got):\n%s", diff)
	}
	if s := got[2].String(); s != "proposed by anthropic claude-x turn 2 (request req_9)" {
		t.Errorf("String = %q", s)
	}
}
