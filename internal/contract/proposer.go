package contract

import (
	"encoding/json"
	"fmt"
)

// Proposer is the model turn that proposed a tool call, as a saved conversation records
// it: the assistant message holding the call names its turn (provider and model, request
// id), and the result answering the call names the ordinal of the Operation it became.
type Proposer struct {
	Conversation ConversationID `json:"conversation"`
	Turn         int            `json:"turn"`  // the assistant message's place, from 1
	Model        string         `json:"model"` // provider and model, as the runtime named it
	RequestID    string         `json:"requestId,omitempty"`
}

// String is the Proposer as a timeline names it: "proposed by MODEL turn N".
func (p Proposer) String() string {
	s := fmt.Sprintf("proposed by %s turn %d", p.Model, p.Turn)
	if p.RequestID != "" {
		s += " (request " + p.RequestID + ")"
	}
	return s
}

// savedMessage is the part of a saved conversation message ProposersOf reads.
type savedMessage struct {
	Role  string `json:"role"`
	Calls []struct {
		ID string `json:"id"`
	} `json:"calls"`
	Results []struct {
		CallID  string `json:"callId"`
		Ordinal int64  `json:"ordinal"`
	} `json:"results"`
	Turn *struct {
		Model     string `json:"model"`
		RequestID string `json:"requestId"`
	} `json:"turn"`
}

// ProposersOf returns, by Operation ordinal, the model turn of c whose call became that
// Operation. A message that does not decode, a call whose result names no Operation and an
// assistant message that names no turn (saved before turns were recorded) add nothing.
func ProposersOf(c Conversation) map[int64]Proposer {
	out := map[int64]Proposer{}
	byCall := map[string]Proposer{}
	turn := 0
	for _, raw := range c.Messages {
		var m savedMessage
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		if m.Role == "assistant" {
			turn++
			if m.Turn != nil {
				for _, call := range m.Calls {
					byCall[call.ID] = Proposer{Conversation: c.ID, Turn: turn, Model: m.Turn.Model, RequestID: m.Turn.RequestID}
				}
			}
		}
		for _, r := range m.Results {
			if p, ok := byCall[r.CallID]; ok && r.Ordinal > 0 {
				out[r.Ordinal] = p
			}
		}
	}
	return out
}
