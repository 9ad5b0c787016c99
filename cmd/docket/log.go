package main

// Log attribute keys of the processes this command runs itself (docket serve, docket
// worker); the packages they wire keep their own.
const (
	logComponent = "component"
	logURL       = "url"
	logPathKey   = "pathKey" // whether serve answers only under its per-run key
	logErr       = "err"
	logWorker    = "workerId"
	logKeyID     = "keyId" // a signing key's id, its RFC 7638 thumbprint
	logTools     = "tools" // how many Tools a worker advertises
	// logWorkspaceTools is the worker's ceiling on the built-in workspace Tools.
	logWorkspaceTools = "workspaceTools"
	logSubject        = "subject"  // a TLS certificate's subject
	logNotAfter       = "notAfter" // when a TLS certificate expires
	logTLS            = "tls"      // whether serve speaks TLS itself
	logProxies        = "proxies"  // how many proxies serve trusts the forwarded headers of
)
