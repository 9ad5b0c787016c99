package gateway

// Log attribute keys. Messages are fixed strings; data goes in these.
const (
	logComponent = "component"
	logAgent     = "agent"
	logTool      = "tool"
	logErr       = "err"
)
