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
	logSeq        = "seq"   // an event's sequence number
	logField      = "field" // what of an event or a row does not hold
)
