package contract

// Error codes of TLS and of the front door of a serve beyond loopback (docs/deploy.md).
const (
	CodeTLSUntrusted   Code = "tls_untrusted"   // the client refuses the server's certificate: another CA, another name, expired
	CodeListenInsecure Code = "listen_insecure" // docket serve refuses a non-loopback --listen without TLS or --behind-proxy
	CodeProxyRequired  Code = "proxy_required"  // a request reached a --behind-proxy serve neither from a named proxy nor from loopback
	CodeBackup         Code = "backup_refused"  // docket backup or restore cannot do what was asked, with the way that can
)
