package worker

// Log attribute keys of the worker.
const (
	logWork   = "work"
	logTool   = "tool"
	logStatus = "status"
	logErr    = "err"
)

// Log attribute keys of the vault's reloads.
const (
	logReason  = "reason"
	logSources = "sources"
	logTools   = "tools"
)

// Log attribute keys of the worker's hop and Run loop.
const (
	logWorker     = "workerId"
	logGeneration = "generation"
	logCode       = "code"
	logKind       = "kind"
)
