package mcpclient

import (
	"encoding/json"

	"github.com/docketrun/docket/internal/contract"
)

// heldStrip is the strip of Operations a conversation was last given in full: its JSON
// exactly as the gateway sent it, and that JSON's digest.
type heldStrip struct {
	digest contract.Digest
	raw    json.RawMessage
}

// stripClaimLocked is what a call of conversation says, in _meta "docket/operations",
// of the strip it holds: its digest, or "" when it holds none.
func (c *Client) stripClaimLocked(conversation string) string {
	if h, ok := c.strips[conversation]; ok {
		return h.digest.String()
	}
	return ""
}

// stripLocked reads the strip an answer's text carries for conversation, whose digest the
// answer's host metadata names, and keeps it. An answer that names the strip unchanged
// (the one the call said it holds) is given it back, so the loop and the model read
// every answer with its strip, as before: naming it unchanged saves the wire, not the
// model's reading. It returns the text to hand on.
func (c *Client) stripLocked(conversation, text string, digest contract.Digest) string {
	var head struct {
		OperationsUnchanged contract.Digest `json:"operationsUnchanged"`
		Operations          json.RawMessage `json:"operations"`
	}
	if err := json.Unmarshal([]byte(text), &head); err != nil {
		delete(c.strips, conversation)
		return text
	}
	switch {
	case head.OperationsUnchanged != (contract.Digest{}):
		h, ok := c.strips[conversation]
		if !ok || h.digest != head.OperationsUnchanged {
			// The gateway names unchanged only the strip the call said it holds.
			c.log.Warn("a tool result names a strip unchanged that the client does not hold", "conversation", conversation)
			delete(c.strips, conversation)
			return text
		}
		var tr contract.ToolResult
		if err := json.Unmarshal([]byte(text), &tr); err != nil {
			return text
		}
		if err := json.Unmarshal(h.raw, &tr.Operations); err != nil {
			c.log.Warn("the strip held does not decode", "conversation", conversation, "err", err)
			return text
		}
		tr.OperationsUnchanged = contract.Digest{}
		b, err := json.Marshal(tr)
		if err != nil {
			c.log.Warn("a tool result with its strip given back does not encode", "conversation", conversation, "err", err)
			return text
		}
		return string(b)
	case head.Operations != nil && digest != (contract.Digest{}) && contract.Sum(head.Operations) == digest:
		if _, ok := c.strips[conversation]; !ok && len(c.strips) >= maxHeldViews {
			for k := range c.strips {
				delete(c.strips, k)
				break
			}
		}
		c.strips[conversation] = heldStrip{digest: digest, raw: head.Operations}
	default:
		delete(c.strips, conversation)
	}
	return text
}
