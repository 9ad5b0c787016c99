package opclass_test

import (
	"regexp"
	"testing"

	"github.com/docketrun/docket/internal/authority/opclass"
)

// TestSubjects: every consent operation has the subject its cards are bound to, each
// reference a wildcard of its route or a body field, and nothing else has one.
func TestSubjects(t *testing.T) {
	wild := regexp.MustCompile(`^\{[a-z]+\}$|^body(\.[a-z]+)?$`)
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
