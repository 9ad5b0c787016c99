package runner

// Log attribute keys of the runtime.
const (
	logErr          = "err"
	logConversation = "conversation"
	logTask         = "task"
	logWake         = "wake"
	logAttempt      = "attempt"
	logModel        = "model"
	logPhase        = "phase"
)
