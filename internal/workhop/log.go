package workhop

// Log attribute keys. Messages are fixed strings; data goes in these.
const (
	logComponent  = "component"
	logKind       = "kind"
	logConnection = "connection"
	logCode       = "code"
	logErr        = "err"
)
