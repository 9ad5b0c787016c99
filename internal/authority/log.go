package authority

// Log attribute keys. Messages are fixed strings and data goes in these, so that a log
// search by key finds every line about one thing.
const (
	logComponent  = "component"
	logProject    = "project"
	logToken      = "token"
	logActor      = "actor"
	logRelease    = "release"
	logErr        = "err"
	logOperations = "operations"
)
