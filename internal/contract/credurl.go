package contract

import (
	"net"
	"net/url"
	"strings"
)

// CodeInsecureURL refuses, on the caller's side, to send a credential to a URL that is
// neither https nor a loopback address.
const CodeInsecureURL Code = "insecure_url"

// CheckCredentialURL refuses a URL a credential (a session, delegate or Agent token, a
// Connection key) may not be sent to: one that is neither https nor http to a loopback
// address (127.0.0.0/8, ::1, localhost, or the unspecified 0.0.0.0 and ::, which reach this
// machine). Over plain http to another host the token would cross the network in the clear
// (docs/security.md). The refusal names only the
// scheme and host: a URL's path can carry docket start's key.
func CheckCredentialURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Errorf(CodeInsecureURL, "the server URL does not parse as scheme://host:port, so no credential is sent to it; set DOCKET_URL (or --url) to https://… or a loopback address such as http://127.0.0.1:7777")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		// An unspecified address (0.0.0.0, ::), which docket serve --listen 0.0.0.0:… writes
		// into the data dir's url file, reaches this machine: nothing crosses the network.
		if ip := net.ParseIP(h); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) || strings.EqualFold(h, "localhost") {
			return nil
		}
	}
	return Errorf(CodeInsecureURL, "%s://%s is neither https nor a loopback address, so no credential is sent to it; use https://… for a remote docket serve, or a loopback address such as http://127.0.0.1:7777", u.Scheme, u.Host)
}
