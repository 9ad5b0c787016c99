package sqlite

import (
	"strconv"
	"strings"
)

// positional returns query with its placeholders $1, $2 … $n written as SQLite's
// anonymous ?, when they appear in that order, each once, and outside any quoted text;
// otherwise query unchanged. The store's queries are written with $n for both dialects,
// but modernc.org/sqlite reads back the name of every named parameter of every statement
// it runs (allocating a string and parsing the number each time), which costs about a
// tenth of an event INSERT; an anonymous parameter has no name to read. Binding is by
// position either way, so the statement means the same. A query with a comment, or
// another kind of parameter, is left alone.
func positional(query string) string {
	var b strings.Builder
	next := 1
	copied := 0
	for i := 0; i < len(query); i++ {
		switch c := query[i]; c {
		case '\'', '"':
			// Skip quoted text: a $ inside it is not a placeholder. SQL doubles a quote
			// inside quotes, which this reads as two quoted texts in a row.
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				return query
			}
			i += 1 + end
		case '?', ':', '@':
			return query // another parameter syntax: leave the query alone
		case '-', '/':
			if i+1 < len(query) && (query[i+1] == c || c == '/' && query[i+1] == '*') {
				return query // a comment, which may hold anything: leave the query alone
			}
		case '$':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if query[i+1:j] != strconv.Itoa(next) {
				return query // out of order, repeated or not a number
			}
			if b.Len() == 0 {
				b.Grow(len(query))
			}
			b.WriteString(query[copied:i])
			b.WriteByte('?')
			copied = j
			next++
			i = j - 1
		}
	}
	if next == 1 {
		return query
	}
	b.WriteString(query[copied:])
	return b.String()
}
