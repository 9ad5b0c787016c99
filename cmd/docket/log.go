package main

// Log attribute keys of the processes this command runs itself (docket serve, docket
// worker); the packages they wire keep their own.
const (
	logComponent  = "component"
	logURL        = "url"
	logErr        = "err"
	logOperations = "operations" // how many Operations a sweep settled
	logWorker     = "workerId"
	logTools      = "tools" // how many Tools a worker advertises
)
