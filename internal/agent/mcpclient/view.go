package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

// maxHeldViews bounds the conversations whose View the client keeps, to apply the next
// answer's View delta to; the gateway indexes as many per session. A conversation left
// out is sent its next changed View in full.
const maxHeldViews = 8

// heldView is the View a conversation's model was last given, whole or as a delta the
// client applied and checked against its digest.
type heldView struct {
	digest contract.Digest
	view   contract.View
}

// deltasLocked reports whether a call of conversation, whose model holds the View with
// digest d, may be answered with a View delta: only when the client holds that View, to
// apply the delta to.
func (c *Client) deltasLocked(conversation string, d contract.Digest) bool {
	h, ok := c.views[conversation]
	return ok && d != (contract.Digest{}) && h.digest == d
}

// viewLocked reads the View an answer's text carries for conversation, whose digest the
// answer's host metadata names, and keeps it. It returns the text the model is shown and
// the digest of the View it then holds. A View delta is applied to the View held, and the
// result must have the digest named; when it does not (or there is no View to apply it
// to), the client asks for the View in full (QueryBoard fullView) and shows that in the
// delta's place, so the model is never shown a View it cannot rebuild. When even that
// fails, the delta is taken out and no digest returned: the model still holds its View,
// which the gateway then no longer names, so the next answer carries the View whole.
func (c *Client) viewLocked(ctx context.Context, conversation, text string, digest contract.Digest) (string, contract.Digest) {
	var tr contract.ToolResult
	if err := json.Unmarshal([]byte(text), &tr); err != nil {
		delete(c.views, conversation)
		return text, digest // not a tool result: shown as it is, no View kept
	}
	switch {
	case tr.ViewDelta != nil:
		h, ok := c.views[conversation]
		if ok && h.digest == tr.ViewDelta.From {
			v, err := tr.ViewDelta.Apply(h.view)
			if err == nil {
				if d, derr := contract.ViewDigest(v); derr == nil && d == digest && digest != (contract.Digest{}) {
					c.keepViewLocked(conversation, digest, v)
					return text, digest
				}
				err = fmt.Errorf("the View it makes is not %s", digest)
			}
			c.log.Warn("a View delta does not apply to the View held; asking for the View in full", "conversation", conversation, "err", err)
		} else {
			c.log.Warn("a View delta from a View not held; asking for the View in full", "conversation", conversation)
		}
		delete(c.views, conversation)
		tr.ViewDelta = nil
		full, d, err := c.fullViewLocked(ctx, conversation)
		if err != nil {
			c.log.Warn("the View in full not read; the answer is shown without its View", "conversation", conversation, "err", err)
			digest = contract.Digest{}
		} else {
			tr.View, digest = full, d
			c.keepViewLocked(conversation, d, full)
		}
		b, err := json.Marshal(tr)
		if err != nil {
			c.log.Warn("a tool result does not encode; shown without its View", "conversation", conversation, "err", err)
			return `{"accepted":` + fmt.Sprint(tr.Accepted) + `}`, contract.Digest{}
		}
		return string(b), digest
	case tr.ViewUnchanged != (contract.Digest{}):
		return text, digest
	case !reflect.ValueOf(tr.View).IsZero():
		// Kept only when it decoded to the View the gateway digested, so that a delta
		// applied to it can be checked.
		if d, err := contract.ViewDigest(tr.View); err == nil && d == digest {
			c.keepViewLocked(conversation, digest, tr.View)
		} else {
			delete(c.views, conversation)
		}
	}
	return text, digest
}

// keepViewLocked keeps v, with digest d, as conversation's View; past maxHeldViews
// another conversation's is dropped.
func (c *Client) keepViewLocked(conversation string, d contract.Digest, v contract.View) {
	if _, ok := c.views[conversation]; !ok && len(c.views) >= maxHeldViews {
		for k := range c.views {
			delete(c.views, k)
			break
		}
	}
	c.views[conversation] = heldView{digest: d, view: v}
}

// fullViewLocked asks the gateway for conversation's View in full: a QueryBoard with
// fullView, saying the conversation holds none.
func (c *Client) fullViewLocked(ctx context.Context, conversation string) (contract.View, contract.Digest, error) {
	p := &mcp.CallToolParams{Name: "QueryBoard", Arguments: json.RawMessage(`{"fullView":true}`),
		Meta: mcp.Meta{contract.MetaViewKey: ""}}
	if conversation != "" {
		p.Meta[contract.MetaConversationKey] = conversation
	}
	c.rt.takeRefusal()
	res, err := c.session.CallTool(ctx, p)
	if err != nil {
		return contract.View{}, contract.Digest{}, c.classify(ctx, "call QueryBoard", err)
	}
	m, err := decodeHostMeta(res.Meta[metaKey])
	if err != nil {
		return contract.View{}, contract.Digest{}, err
	}
	var tr contract.ToolResult
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			if err := json.Unmarshal([]byte(tc.Text), &tr); err != nil {
				return contract.View{}, contract.Digest{}, fmt.Errorf("decode QueryBoard result: %w", err)
			}
			break
		}
	}
	if d, err := contract.ViewDigest(tr.View); err != nil || d != m.ViewDigest {
		return contract.View{}, contract.Digest{}, fmt.Errorf("QueryBoard's View is not the one its digest %s names", m.ViewDigest)
	}
	return tr.View, m.ViewDigest, nil
}

// HeldCase returns Case id as the View the client holds for conversation lists it (the
// last View its model was given, whole or rebuilt from deltas), and whether it does: so
// that a runtime can name the root of a Case a call closed when the call's answer carried
// only a View delta, or none (viewUnchanged), or was cut.
func (c *Client) HeldCase(conversation string, id contract.CaseID) (contract.CaseEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.views[conversation]
	if !ok {
		return contract.CaseEntry{}, false
	}
	for _, e := range h.view.Cases.Items {
		if e.CaseID == id {
			return e, true
		}
	}
	for _, r := range h.view.Roots.Items {
		if r.CaseID == id {
			return contract.CaseEntry{CaseID: id, Root: r.Root}, true
		}
	}
	return contract.CaseEntry{}, false
}
