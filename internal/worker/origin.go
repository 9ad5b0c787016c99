package worker

import (
	"errors"
	"net/url"
	"strings"
)

// Origin returns u's origin as "scheme://host:port", lower-cased, the port made explicit
// (80 for http, 443 for https). Two URLs are one origin only when scheme, host and port
// all agree: a Source's secret headers go to its origin and nowhere else
// (docs/workers.md).
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// RedactURL returns err with the URL of a *url.Error in its chain cut to its origin: the
// path and query of a Source's URL may hold a secret, and transport errors go to the
// worker's log. Other errors are returned as they are.
func RedactURL(err error) error {
	ue, ok := errors.AsType[*url.Error](err)
	if !ok {
		return err
	}
	shown := "[redacted url]"
	if u, perr := url.Parse(ue.URL); perr == nil {
		shown = u.Scheme + "://" + u.Host + "/[redacted]"
	}
	return &redactedError{op: ue.Op, url: shown, err: ue.Err}
}

// redactedError is a *url.Error without the URL's path, query or credentials.
type redactedError struct {
	op, url string
	err     error
}

func (e *redactedError) Error() string { return e.op + " " + e.url + ": " + e.err.Error() }
func (e *redactedError) Unwrap() error { return e.err }
