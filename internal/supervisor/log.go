package supervisor

// Log attribute keys of the supervisor.
const (
	logChild = "child"
	logPid   = "pid"
	logRun   = "run"
	logErr   = "err"
)
