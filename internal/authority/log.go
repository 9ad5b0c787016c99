package authority

// Log attribute keys (STYLE.md §8). Messages are fixed strings; data goes in these.
const (
	logComponent = "component"
	logProject   = "project"
	logToken     = "token"
	logActor     = "actor"
	logRelease   = "release"
	logErr       = "err"
)
