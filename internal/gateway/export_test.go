package gateway

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
