// Package secheaders provides the security headers every HTTP answer of Docket carries,
// docket serve's and docket start's gate's alike.
package secheaders

import "net/http"

// ContentSecurityPolicy forbids inline script and every foreign origin.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// Set sets the security headers on h: the policy, no MIME sniffing, no referrer, no
// framing and no caching.
func Set(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}

// StrictTransportSecurity is the HSTS header of an answer that came over TLS: the browser
// comes back only over https for a year. It names no subdomains: the installation owns
// its own name, not the names beneath it.
const StrictTransportSecurity = "max-age=31536000"
