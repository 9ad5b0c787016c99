package localpath_test

import (
	"net/url"
	"testing"

	"github.com/docketrun/docket/internal/localpath"
	"github.com/docketrun/docket/internal/localpath/localpathtest"
)

// TestParse: a path of the origin is kept, escaped; every hostile target is refused.
func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"/", "/", true},
		{"/projects/default/needs?kind=delegation", "/projects/default/needs?kind=delegation", true},
		{"/projects/a%20b", "/projects/a%20b", true},
		{"/projects/a b", "/projects/a%20b", true},
		{"/a#frag", "/a", true},
		{"", "", false},
		{"projects", "", false},
		{"/a?x=\\", "", false},
	} {
		if got, ok := localpath.Parse(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %q, %t, want %q, %t", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	base, err := url.Parse("http://127.0.0.1:7420/signin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range localpathtest.Hostile("evil.example") {
		got, ok := localpath.Parse(tc.Value)
		if !ok {
			continue
		}
		// Kept, a target must be a path of the origin as a browser reads it ("/%252F…"
		// is the segment "%2F…", not a slash).
		if to, err := localpathtest.Browse(base, got); err != nil || to.Host != base.Host {
			t.Errorf("Parse(%q) (%s) = %q, which a browser reads as %v (%v)", tc.Value, tc.Name, got, to, err)
		}
	}
}

// FuzzParse: whatever Parse keeps, a browser reads as a path of the same origin, and
// Parse keeps it as it is.
func FuzzParse(f *testing.F) {
	for _, tc := range localpathtest.Hostile("evil.example") {
		f.Add(tc.Value)
	}
	f.Add("/projects/default/needs?kind=delegation")
	base, err := url.Parse("http://127.0.0.1:7420/signin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, ok := localpath.Parse(in)
		if !ok {
			return
		}
		to, err := localpathtest.Browse(base, out)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", in, out, err)
		}
		if to.Host != base.Host || to.Scheme != base.Scheme {
			t.Fatalf("Parse(%q) = %q, which a browser reads as %s", in, out, to)
		}
		if again, ok := localpath.Parse(out); !ok || again != out {
			t.Fatalf("Parse(%q) = %q, but Parse(%q) = %q, %t", in, out, out, again, ok)
		}
	})
}
