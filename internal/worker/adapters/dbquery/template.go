package dbquery

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Destructive statement classes a db-exec-fenced Tool may allow in fence.allow.
const (
	AllowDrop      = "drop"
	AllowTruncate  = "truncate"
	AllowAlter     = "alter"
	AllowDeleteAll = "delete_all" // DELETE without WHERE
	AllowUpdateAll = "update_all" // UPDATE without WHERE
)

// dialect says how driver parameters are written.
type dialect int

const (
	dialectSQLite   dialect = iota // ?1, ?2 …
	dialectPostgres                // $1, $2 …
)

// template is a Tool's SQL after parsing: the statement with {param} placeholders turned
// into numbered driver parameters, the parameter names in number order, and the
// statement's words outside strings and comments, upper-cased.
type template struct {
	sql    string
	params []string
	words  []string
}

// parseTemplate scans src once, skipping quoted strings, quoted identifiers, dollar
// quotes and comments. It refuses more than one statement and braces that are not
// {param}. Values are never written into the SQL: a placeholder becomes a driver
// parameter, so an argument cannot change the statement.
func parseTemplate(src string, d dialect) (template, error) {
	var out strings.Builder
	var t template
	index := map[string]int{}
	ended := false // a ';' was seen; only space and comments may follow
	bad := func(format string, args ...any) (template, error) {
		return template{}, contract.Errorf(contract.CodeSQLStatement, format, args...)
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := closeQuote(src, i, c)
			if j < 0 {
				return bad("the SQL has an unterminated %c quote; close it.", c)
			}
			if ended {
				return bad("the SQL holds more than one statement; a Tool runs exactly one.")
			}
			out.WriteString(src[i:j])
			i = j
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			out.WriteString(src[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return bad("the SQL has an unterminated /* comment; close it.")
			}
			out.WriteString(src[i : i+2+j+2])
			i += 2 + j + 2
		case c == '$' && d == dialectPostgres && dollarTag(src[i:]) != "":
			tag := dollarTag(src[i:])
			j := strings.Index(src[i+len(tag):], tag)
			if j < 0 {
				return bad("the SQL has an unterminated %s quote; close it.", tag)
			}
			if ended {
				return bad("the SQL holds more than one statement; a Tool runs exactly one.")
			}
			out.WriteString(src[i : i+len(tag)+j+len(tag)])
			i += len(tag) + j + len(tag)
		case c == ';':
			ended = true
			i++
		case c == '{':
			j := strings.IndexByte(src[i:], '}')
			if j < 0 {
				return bad("the SQL has a '{' without '}'; placeholders are written {param}.")
			}
			name := src[i+1 : i+j]
			if !validParam(name) {
				return bad("the SQL placeholder {%.40s} is not a parameter name; use lower-case letters, digits and '_'.", name)
			}
			if ended {
				return bad("the SQL holds more than one statement; a Tool runs exactly one.")
			}
			n, ok := index[name]
			if !ok {
				t.params = append(t.params, name)
				n = len(t.params)
				index[name] = n
			}
			if d == dialectPostgres {
				out.WriteString("$" + strconv.Itoa(n))
			} else {
				out.WriteString("?" + strconv.Itoa(n))
			}
			i += j + 1
		case c == '}':
			return bad("the SQL has a '}' without '{'; placeholders are written {param}.")
		case isWordByte(c):
			j := i
			for j < len(src) && (isWordByte(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if ended {
				return bad("the SQL holds more than one statement; a Tool runs exactly one.")
			}
			t.words = append(t.words, strings.ToUpper(src[i:j]))
			out.WriteString(src[i:j])
			i = j
		default:
			if ended && !isSpace(c) {
				return bad("the SQL holds more than one statement; a Tool runs exactly one.")
			}
			if !ended {
				out.WriteByte(c)
			}
			i++
		}
	}
	if len(t.words) == 0 {
		return bad("the SQL is empty; write one statement.")
	}
	t.sql = strings.TrimSpace(out.String())
	return t, nil
}

func closeQuote(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q { // doubled quote escapes itself
				j++
				continue
			}
			return j + 1
		}
	}
	return -1
}

// dollarTag returns the $tag$ opening s, or "".
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '$':
			return s[:j+1]
		case !isWordByte(c) && !(j > 1 && c >= '0' && c <= '9'):
			return ""
		}
	}
	return ""
}

func isWordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func validParam(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return true
}

// mutating are words that make a statement change data or schema.
var mutating = []string{"INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "DROP", "ALTER", "CREATE", "TRUNCATE",
	"GRANT", "REVOKE", "ATTACH", "DETACH", "VACUUM", "REINDEX", "PRAGMA", "COPY", "CALL", "DO", "EXECUTE", "INTO", "LOCK", "SET"}

// checkQuery refuses anything but one SELECT (or WITH … SELECT, or VALUES) that names no mutating
// word outside strings.
func (t template) checkQuery() error {
	if first := t.words[0]; first != "SELECT" && first != "WITH" && first != "VALUES" {
		return contract.Errorf(contract.CodeSQLStatement, "a db-query Tool runs one SELECT, but its SQL starts with %s; use db-exec-fenced for changes.", first)
	}
	for _, w := range t.words {
		if slices.Contains(mutating, w) {
			return contract.Errorf(contract.CodeSQLStatement, "a db-query Tool runs one read-only SELECT, but its SQL uses %s; use db-exec-fenced for changes.", w)
		}
	}
	return nil
}

// destructive returns the destructive class of an exec statement, or "".
func (t template) destructive() string {
	has := func(w string) bool { return slices.Contains(t.words, w) }
	switch {
	case has("DROP"):
		return AllowDrop
	case has("TRUNCATE"):
		return AllowTruncate
	case has("ALTER"):
		return AllowAlter
	case has("DELETE") && !has("WHERE"):
		return AllowDeleteAll
	case has("UPDATE") && !has("WHERE"):
		return AllowUpdateAll
	}
	return ""
}

// checkExec refuses a destructive statement whose class the fence does not allow.
func (t template) checkExec(allow []string) error {
	for _, a := range allow {
		if !slices.Contains([]string{AllowDrop, AllowTruncate, AllowAlter, AllowDeleteAll, AllowUpdateAll}, a) {
			return contract.Errorf(contract.CodeManifestInvalid, "fence.allow names %.20q; use drop, truncate, alter, delete_all or update_all.", a)
		}
	}
	if class := t.destructive(); class != "" && !slices.Contains(allow, class) {
		return contract.Errorf(contract.CodeSQLDestructive, "the SQL is destructive (%s); declare it with \"fence\": {\"allow\": [%q]} if that is intended.", class, class)
	}
	if t.words[0] == "SELECT" {
		return fmt.Errorf("%w", contract.Errorf(contract.CodeSQLStatement, "a db-exec-fenced Tool changes data; use db-query for a SELECT."))
	}
	return nil
}
