package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// OpenSessions counts the sessions the gateway's MCP server holds open.
func (g *Gateway) OpenSessions() int {
	n := 0
	for range g.server.Sessions() {
		n++
	}
	return n
}

// RememberedReplaced counts the replaced session ids the gateway remembers.
func (g *Gateway) RememberedReplaced() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.replaced)
}

// EncodeView is the indexed encoding of v the gateway sends and digests.
func EncodeView(v contract.View) ([]byte, contract.Digest, error) {
	enc, err := encodeView(v, true)
	return enc.body, enc.digest, err
}

// DeltaOf is the delta the gateway sends a client that holds old and is due to, and
// whether it sends one rather than new in full.
func DeltaOf(old, to contract.View) (contract.ViewDelta, bool, error) {
	from, err := encodeView(old, true)
	if err != nil {
		return contract.ViewDelta{}, false, err
	}
	enc, err := encodeView(to, true)
	if err != nil {
		return contract.ViewDelta{}, false, err
	}
	d, ok := viewDelta(from.index, enc.index, to)
	return d, ok, nil
}

// ResultText is the text block the gateway answers r with, its View in full.
func ResultText(r contract.ToolResult) (string, error) {
	res, _, err := toolResult(operation.Answer{Result: r}, contract.Digest{}, true, nil, contract.Digest{}, false, nil, stripEncoding{})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// MarkDelivered records, in every open session, that n more Operations' outcomes (with
// ordinals no Operation has) were given in full, as a session that answered n writes
// has.
func (g *Gateway) MarkDelivered(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.sessions {
		s.mu.Lock()
		for i := range n {
			s.delivered[-1-int64(i)] = true
		}
		s.mu.Unlock()
	}
}
