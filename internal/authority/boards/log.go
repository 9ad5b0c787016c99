package boards

// Log attribute keys, the same as the rest of the authority's, so that a log search by
// key finds every line about one thing.
const (
	logProject = "project"
	logActor   = "actor"
	logRelease = "release"
	logErr     = "err"
	logCase    = "case"
)
