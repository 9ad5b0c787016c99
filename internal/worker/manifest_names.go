package worker

import (
	"fmt"
	"reflect"
	"strings"
)

// manifestNames are the keys a manifest may hold at any depth: what an unknown key was
// most likely meant to be is the nearest of them.
var manifestNames = jsonNames(manifestFile{}, Tool{}, Param{}, Env{}, Fence{})

// unknownField says which key encoding/json refused as unknown and, when one is near
// enough to be a typo of it, which field it was likely meant to be: `unknown field
// "adaptor" (did you mean "adapter"?)`. ok is false for any other error.
func unknownField(err error) (text string, ok bool) {
	key, ok := strings.CutPrefix(err.Error(), `json: unknown field "`)
	if !ok {
		return "", false
	}
	key = strings.TrimSuffix(key, `"`)
	text = fmt.Sprintf("unknown field %.64q", key)
	if near := nearestName(key, manifestNames); near != "" {
		text += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return text, true
}

// nearestName is the name in names closest to key by edit distance, when it is within a
// third of key's length (at least one edit); "" when none is.
func nearestName(key string, names []string) string {
	best, bestD := "", max(1, len([]rune(key))/3)+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(key), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// jsonNames lists the JSON keys of the fields of each struct value in vs.
func jsonNames(vs ...any) []string {
	var out []string
	for _, v := range vs {
		t := reflect.TypeOf(v)
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out = append(out, name)
			}
		}
	}
	return out
}
