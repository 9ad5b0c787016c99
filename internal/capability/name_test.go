package capability

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidName_AsTheCountedPattern: a name checked with its length apart from the
// pattern is taken exactly when the counted pattern takes it.
func TestValidName_AsTheCountedPattern(t *testing.T) {
	counted := regexp.MustCompile(`^[a-z][a-z0-9_]{0,127}$`)
	cases := []string{"", "a", "A", "0a", "_a", "a_1", "a-b", "a.b", "é", "aé", "a\n"}
	for _, n := range []int{127, 128, 129, 256} {
		cases = append(cases, strings.Repeat("a", n), "a"+strings.Repeat("_", n-1), strings.Repeat("a", n-2)+"é")
	}
	for _, s := range cases {
		if got, want := validName(s), counted.MatchString(s); got != want {
			t.Errorf("validName(%q) (%d bytes) = %v, want %v", s, len(s), got, want)
		}
	}
}
