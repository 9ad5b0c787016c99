package workbench

import (
	"regexp"
	"strings"
	"testing"
)

// TestAgentName_AsTheCountedPattern: the form's Agent name, checked with its length apart
// from the pattern, is taken exactly when the counted pattern takes it.
func TestAgentName_AsTheCountedPattern(t *testing.T) {
	counted := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	cases := []string{"", "a", "A", "0", "_a", "a_b.c-d", "a:b", "a b", "é", "aé", "a\n"}
	for _, n := range []int{63, 64, 65, 128} {
		cases = append(cases, strings.Repeat("a", n), "a"+strings.Repeat("-", n-1), strings.Repeat("a", n-2)+"é")
	}
	for _, s := range cases {
		if got, want := validAgentName(s), counted.MatchString(s); got != want {
			t.Errorf("Agent name %q (%d bytes): taken %v, want %v", s, len(s), got, want)
		}
	}
}
