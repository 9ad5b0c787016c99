package worker

// Log attribute keys of the worker.
const (
	logWork   = "work"
	logTool   = "tool"
	logStatus = "status"
	logErr    = "err"
)
