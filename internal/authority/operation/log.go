package operation

// Log attribute keys, the same as the rest of the authority's, so that a log search by
// key finds every line about one thing.
const (
	logErr        = "err"
	logProject    = "project"
	logOperations = "operations"
	logRequests   = "requests"
	logRetries    = "retries"
	logHolds      = "holds"
)
