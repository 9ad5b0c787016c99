package console

// Log attribute keys. Messages are fixed strings; data goes in these.
const (
	logComponent = "component"
	logMethod    = "method"
	logPath      = "path"
	logCode      = "errorCode"
	logErr       = "err"
	logCard      = "card"
)
