package contract

import "testing"

func TestNearest(t *testing.T) {
	tests := []struct {
		name       string
		candidates []string
		want       string
		ok         bool
	}{
		{"mull", []string{"add", "sub", "mul", "div"}, "mul", true},
		{"adaptor", []string{"name", "adapter", "config"}, "adapter", true},
		{"cofnig", []string{"name", "adapter", "config"}, "config", true}, // a swap is one edit
		{"mul", []string{"add", "mul"}, "", false},                        // itself
		{"zzz", []string{"add", "sub"}, "", false},                        // nothing near
		{"ab", []string{"xy"}, "", false},                                 // two edits of two letters is no hint
		{"totally_other", []string{"name"}, "", false},
		{"", []string{"a"}, "", false},
	}
	for _, tt := range tests {
		got, ok := Nearest(tt.name, tt.candidates)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Nearest(%q, %v) = %q, %v; want %q, %v", tt.name, tt.candidates, got, ok, tt.want, tt.ok)
		}
	}
}
