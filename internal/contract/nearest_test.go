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

func TestTOMLTypeWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"incompatible types: TOML value has type string; destination has type slice", `it is a string, but it takes a list: write it as ["…", "…"]`},
		{"incompatible types: TOML value has type int64; destination has type string", `it is a whole number, but it takes a string: write it in double quotes, "…"`},
		{"incompatible types: TOML value has type []any; destination has type integer", "it is a list, but it takes a whole number: write it without quotes, e.g. 3"},
	}
	for _, tt := range tests {
		if got, ok := TOMLTypeWords(tt.in); !ok || got != tt.want {
			t.Errorf("TOMLTypeWords(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := TOMLTypeWords("something else"); ok {
		t.Error("TOMLTypeWords read a message that is no type mismatch")
	}
}
