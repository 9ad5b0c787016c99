// Package localpath provides the one check of a redirect target Docket takes from a
// request: it must stay a path on the origin that answers, however a browser reads it.
package localpath

import (
	"net/url"
	"strings"
)

// Parse returns p as a path (with its query, never a fragment) on the origin that serves
// it, escaped, or ok false when a browser could read p as another origin or as no path.
//
// A browser reads a Location more loosely than Go parses it: it drops tabs and newlines
// anywhere, reads a backslash as a slash, and takes "//host" as another site. So "/\t/evil",
// "/\evil" and "//evil" all lead off the origin, and so do their encoded forms once a
// server decodes them. Parse refuses every control character and backslash, encoded or
// not, any scheme, host or user, and a path that does not start with exactly one slash
// (docs/security.md, "Redirects").
func Parse(p string) (_ string, ok bool) {
	if !strings.HasPrefix(p, "/") || unsafe(p) {
		return "", false
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "", false
	}
	if !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || unsafe(u.Path) {
		return "", false
	}
	out := u.EscapedPath()
	if strings.HasPrefix(out, "//") {
		return "", false
	}
	if u.RawQuery != "" {
		if unsafe(u.RawQuery) {
			return "", false
		}
		out += "?" + u.RawQuery
	}
	return out, true
}

// unsafe reports whether s holds a character a browser drops or reads as a slash.
func unsafe(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' })
}
