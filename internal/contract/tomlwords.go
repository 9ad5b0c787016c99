package contract

import (
	"regexp"
	"strings"
	"sync"
)

// tomlTypeRE matches the TOML decoder's type mismatch, as BurntSushi/toml words it after
// its "toml: line N (last key …): " prefix.
var tomlTypeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`incompatible types: TOML value has type (.+); destination has type (.+)$`)
})

// TOMLTypeWords rewords a TOML decoder's type mismatch ("incompatible types: TOML value
// has type string; destination has type slice") as a person fixes it ("it is a string,
// but it takes a list: write it as [\"…\", \"…\"]"); ok is false for any other text. Every
// TOML file Docket reads (capability.toml, policies) says its type errors this way.
func TOMLTypeWords(msg string) (words string, ok bool) {
	m := tomlTypeRE().FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	got := map[string]string{"string": "a string", "int64": "a whole number", "float64": "a number", "bool": "true or false",
		"[]any": "a list", "map[string]any": "a table"}[m[1]]
	if got == "" {
		got = "a " + strings.TrimPrefix(m[1], "toml.")
	}
	want, fix := "a "+m[2], ""
	switch m[2] {
	case "slice":
		want, fix = "a list", `write it as ["…", "…"]`
	case "map":
		want, fix = "a table", "write it as { key = … } or a [section]"
	case "string", "primitive (string-like)":
		want, fix = "a string", `write it in double quotes, "…"`
	case "integer":
		want, fix = "a whole number", "write it without quotes, e.g. 3"
	case "float":
		want, fix = "a number", "write it without quotes, e.g. 2.5"
	case "boolean":
		want, fix = "true or false", "write true or false, without quotes"
	}
	words = "it is " + got + ", but it takes " + want
	if fix != "" {
		words += ": " + fix
	}
	return words, true
}
