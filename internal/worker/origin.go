package worker

import (
	"net/url"
	"strings"
)

// Origin returns u's origin as "scheme://host:port", lower-cased, the port made explicit
// (80 for http, 443 for https). Two URLs are one origin only when scheme, host and port
// all agree: a Source's secret headers go to its origin and nowhere else (issue 11,
// item 1).
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
