package gateway

// Log attribute keys (STYLE.md §8). Messages are fixed strings; data goes in these.
const (
	logComponent = "component"
	logAgent     = "agent"
	logTool      = "tool"
	logErr       = "err"
)
