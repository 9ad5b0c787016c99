package agent

// Log attribute keys of the agent loop.
const (
	logConversation = "conversation"
	logCall         = "call"
	logTool         = "tool"
	logOrdinal      = "ordinal"
	logErr          = "err"
)
