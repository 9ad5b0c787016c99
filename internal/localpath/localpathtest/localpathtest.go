// Package localpathtest provides the hostile redirect targets the tests of every door
// that redirects send it, and a browser's reading of the Location the door answers.
package localpathtest

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// Target is one redirect target a link or a request could carry.
type Target struct {
	Name  string
	Value string
}

// Hostile returns targets that lead a browser to host, another origin, if a door
// answered them as they are: each spells "//host" in a way some reader accepts.
func Hostile(host string) []Target {
	return []Target{
		{"two slashes", "//" + host + "/"},
		{"a slash and a backslash", `/\` + host + "/"},
		{"two backslashes", `\\` + host + "/"},
		{"a tab between the slashes", "/\t/" + host + "/"},
		{"a newline between the slashes", "/\n/" + host + "/"},
		{"a carriage return between the slashes", "/\r/" + host + "/"},
		{"a tab, encoded", "/%09/" + host + "/"},
		{"a second slash, encoded", "/%2F" + host + "/"},
		{"a second slash, encoded twice", "/%252F" + host + "/"},
		{"a backslash, encoded", "/%5C" + host + "/"},
		{"an absolute URL", "http://" + host + "/"},
		{"an absolute URL with a backslash", `http:\\` + host + "/"},
		{"a scheme and no slashes", "http:" + host},
		{"user info", "//me@" + host + "/"},
		{"a dot segment", "/.//" + host + "/"},
		{"a leading space", " //" + host + "/"},
		{"javascript", "javascript:location='//" + host + "/'"},
	}
}

// Browse returns the URL a browser on base goes to when answered Location: location,
// read as browsers read URLs of http and https (the WHATWG URL standard): leading and
// trailing spaces and control characters are dropped, tabs and newlines anywhere are
// dropped, and a backslash is a slash.
func Browse(base *url.URL, location string) (*url.URL, error) {
	loc := strings.TrimFunc(location, func(r rune) bool { return r <= ' ' })
	loc = strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, loc)
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	return base.ResolveReference(ref), nil
}

// StaysOn checks that a browser on base, answered Location: location by a door sent the
// target what, goes nowhere but base's origin: the location reads as a URL there, and
// following it with client (which must not follow redirects itself) makes no visit to
// the other site, whose count is visits.
func StaysOn(t testing.TB, base *url.URL, what, location string, client *http.Client, visits *atomic.Int64) {
	t.Helper()
	to, err := Browse(base, location)
	if err != nil {
		t.Fatalf("%s answered Location %q, which does not parse: %v", what, location, err)
	}
	if to.Host != base.Host {
		t.Fatalf("%s answered Location %q, which a browser reads as %s, off its origin", what, location, to)
	}
	resp, err := client.Get(to.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := visits.Load(); n != 0 {
		t.Errorf("%s reached the other site %d times", what, n)
	}
}
