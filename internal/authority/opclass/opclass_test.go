package opclass_test

import (
	"fmt"
	"net/url"
	"regexp"
	"testing"

	"github.com/docketrun/docket/internal/authority/opclass"
)

// TestSubjects: every consent operation has the subject its cards are bound to, each
// reference a wildcard of its route or a body field (dotted into nested objects), and nothing
// else has one.
func TestSubjects(t *testing.T) {
	wild := regexp.MustCompile(`^\{[a-z]+\}$|^body(\.[a-z]+)*$`)
	for _, op := range opclass.Table {
		sub, ok := opclass.Subjects[op.Name]
		switch {
		case op.Class == opclass.Consent && !ok:
			t.Errorf("consent operation %s has no subject", op.Name)
		case op.Class != opclass.Consent && ok:
			t.Errorf("%s operation %s has a subject", op.Class, op.Name)
		}
		for _, ref := range sub.Refs {
			if !wild.MatchString(ref) {
				t.Errorf("%s: reference %q is neither a {wildcard} nor body.field", op.Name, ref)
			}
			if ref[0] == '{' && !regexp.MustCompile(regexp.QuoteMeta(ref)).MatchString(op.Route) {
				t.Errorf("%s: reference %s is not a wildcard of %s", op.Name, ref, op.Route)
			}
		}
	}
	for name := range opclass.Subjects {
		if _, ok := opclass.ByName(name); !ok {
			t.Errorf("Subjects names %s, which the table lacks", name)
		}
	}
}

// TestOperation_PathValues: a path of the route gives its wildcards unescaped; a path of
// another shape gives none.
func TestOperation_PathValues(t *testing.T) {
	op, _ := opclass.ByName("source.bind")
	tests := []struct {
		path string
		want map[string]string
	}{
		{"/api/v1/projects/default/connections/c1/sources/files", map[string]string{"project": "default", "connection": "c1", "source": "files"}},
		{"/api/v1/projects/a%20b/connections/c%2F1/sources/files", map[string]string{"project": "a b", "connection": "c/1", "source": "files"}},
		{"/api/v1/projects/default/connections/c1/tools/files", nil},
		{"/api/v1/projects/default/connections//sources/files", nil},
		{"/api/v1/projects/default/connections/c1/sources", nil},
		{"/api/v1/projects/default/connections/%zz/sources/files", nil},
	}
	for _, tt := range tests {
		got, ok := op.PathValues(tt.path)
		if ok != (tt.want != nil) || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("PathValues(%q) = %v, %v; want %v", tt.path, got, ok, tt.want)
		}
	}
}

// FuzzPathValues: no path panics, and a path built from values matches back to them.
func FuzzPathValues(f *testing.F) {
	f.Add("default", "c1", "files")
	f.Add("a b", "c/1", "ü")
	op, _ := opclass.ByName("source.bind")
	f.Fuzz(func(t *testing.T, project, conn, source string) {
		op.PathValues(project + "/" + conn + "/" + source)
		if project == "" || conn == "" || source == "" {
			return
		}
		path := "/api/v1/projects/" + url.PathEscape(project) + "/connections/" + url.PathEscape(conn) + "/sources/" + url.PathEscape(source)
		got, ok := op.PathValues(path)
		if !ok || got["project"] != project || got["connection"] != conn || got["source"] != source {
			t.Fatalf("PathValues(%q) = %v, %v", path, got, ok)
		}
	})
}
