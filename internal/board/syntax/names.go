package syntax

import (
	"strconv"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// varName returns the name of a variable token, refusing the names reserved for
// anonymous variables.
func varName(t token) (string, error) {
	if t.text != anonymous && isAnonymousName(t.text) {
		return "", syntaxError(t.pos, "the variable name %s is reserved for anonymous variables; write _ or choose another name", t.text)
	}
	return t.text, nil
}

// isAnonymousName reports whether a variable name is one given to a lone '_': "_" and digits.
func isAnonymousName(s string) bool {
	if len(s) < 2 || s[0] != '_' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// checkName refuses a predicate or argument name outside [a-z][a-z0-9_]*.
func checkName(t token, what string) error {
	if len(t.text) > 128 {
		return syntaxError(t.pos, "the %s name %s… is longer than 128 bytes; shorten it", what, t.text[:16])
	}
	for i := 0; i < len(t.text); i++ {
		if c := t.text[i]; c >= 'A' && c <= 'Z' {
			return syntaxError(t.pos, "the %s name %s has a capital letter; names are lower case (capitals start variables)", what, t.text)
		}
	}
	return nil
}

// numberAnonymous renames each lone '_' to a fresh variable _1, _2, … in canonical order:
// head arguments, then body literals, each atom's arguments sorted by name. Because the
// order depends only on the AST, printing a statement and parsing it again yields the same
// names.
func numberAnonymous(head *engine.Atom, body []engine.Literal) {
	n := 0
	rename := func(a *engine.Atom) {
		for i := range a.Args {
			if a.Args[i].Term.Var == anonymous {
				n++
				a.Args[i].Term.Var = "_" + strconv.Itoa(n)
			}
		}
	}
	if head != nil {
		rename(head)
	}
	for i := range body {
		rename(&body[i].Atom)
	}
}

// teachingOf returns the teaching sentence of a contract error, or its text.
func teachingOf(err error) string {
	if e, ok := err.(*contract.Error); ok {
		return e.Teaching
	}
	return err.Error()
}
