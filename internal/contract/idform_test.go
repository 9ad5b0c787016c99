package contract_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// idFormCases are the inputs each id form is checked on: the lengths around its bound,
// every character class, multi-byte letters and a trailing newline.
func idFormCases(max int) []string {
	cases := []string{"", "a", "A", "0", "_a", ".a", "-a", ":a", "a_b.c-d", "a:b", "a b", "é", "aé", "a\n", "a\x00", "a/b", "Ωmega"}
	for _, n := range []int{max - 1, max, max + 1, 2 * max} {
		cases = append(cases, strings.Repeat("a", n), "a"+strings.Repeat("-", n-1), strings.Repeat("a", n-2)+"é")
	}
	return cases
}

// TestIDForms_AsTheCountedPatterns: the conversation id and client key forms, checked with
// their length apart from the pattern, take exactly what their counted patterns take.
func TestIDForms_AsTheCountedPatterns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		form  *regexp.Regexp
		max   int
		check func(string) bool
	}{
		{"conversation id", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`), 64,
			func(s string) bool { _, err := contract.ParseConversationID(s); return err == nil }},
		{"client key", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`), 128,
			func(s string) bool { return contract.CheckClientKey(s) == nil }},
	} {
		for _, s := range idFormCases(tc.max) {
			want := tc.form.MatchString(s) || tc.name == "client key" && s == "" // "" is no key
			if got := tc.check(s); got != want {
				t.Errorf("%s %q (%d bytes): taken %v, want %v", tc.name, s, len(s), got, want)
			}
		}
	}
}
