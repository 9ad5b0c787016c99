package certs

// Log attribute keys. Messages are fixed strings; data goes in these.
const (
	logErr      = "err"
	logSubject  = "subject"
	logSerial   = "serial"
	logNotAfter = "notAfter"
)
