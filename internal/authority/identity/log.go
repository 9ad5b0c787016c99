package identity

// Log attribute keys, the same as the rest of the authority's, so that a log search by
// key finds every line about one thing.
const (
	logProject = "project"
	logToken   = "token"
	logActor   = "actor"
	logErr     = "err"
)
