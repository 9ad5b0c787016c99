package syntax

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
)

// wrapWidth is the line length past which a rule prints one body literal per line.
const wrapWidth = 100

// Print formats statements as rule text, one per line, such that Parse reads back the same
// facts and rules (positions aside). A rule's id is printed as "@id" only when it differs
// from [DefaultRuleID]. Names are assumed valid, as Parse and engine.NewAtom make them.
func Print(stmts []Statement) []byte {
	var b strings.Builder
	for _, s := range stmts {
		switch {
		case s.Fact != nil:
			b.WriteString(FormatAtom(*s.Fact))
			b.WriteString(".\n")
		case s.Rule != nil:
			b.WriteString(FormatRule(*s.Rule))
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// FormatRule formats r as one statement: "@id " when the id is not the default, the head,
// ":-" and the body. A long rule puts each body literal on its own indented line.
func FormatRule(r engine.Rule) string {
	text := ruleText(r, false)
	if len(text) > wrapWidth {
		text = ruleText(r, true)
	}
	if r.ID != "" && r.ID != DefaultRuleID(r) {
		return "@" + r.ID + " " + text
	}
	return text
}

// DefaultRuleID returns the id Parse gives a rule written without "@id": the head
// predicate, '#', and 12 hex digits of the sha256 of the rule's one-line text.
func DefaultRuleID(r engine.Rule) string {
	sum := sha256.Sum256([]byte(ruleText(r, false)))
	return r.Head.Pred + "#" + hex.EncodeToString(sum[:6])
}

// ruleText formats head :- body. without the id, on one line or wrapped.
func ruleText(r engine.Rule, wrap bool) string {
	var b strings.Builder
	b.WriteString(FormatAtom(r.Head))
	if len(r.Body) == 0 {
		// A rule with no body is not something Parse produces (it reads as a fact), but
		// printing it must still be total.
		b.WriteString(" :- .")
		return b.String()
	}
	b.WriteString(" :-")
	for i, l := range r.Body {
		if i > 0 {
			b.WriteByte(',')
		}
		if wrap {
			b.WriteString("\n    ")
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(FormatLiteral(l))
	}
	b.WriteByte('.')
	return b.String()
}

// FormatLiteral formats l, with "not " for negation-as-failure.
func FormatLiteral(l engine.Literal) string {
	if l.NAF {
		return "not " + FormatAtom(l.Atom)
	}
	return FormatAtom(l.Atom)
}

// FormatAtom formats a as in rule text, e.g. ~edge(from: 1, to: ?x).
func FormatAtom(a engine.Atom) string {
	var b strings.Builder
	if a.Neg {
		b.WriteByte('~')
	}
	b.WriteString(a.Pred)
	b.WriteByte('(')
	for i, arg := range a.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(arg.Name)
		b.WriteString(": ")
		b.WriteString(FormatTerm(arg.Term))
	}
	b.WriteByte(')')
	return b.String()
}

// FormatTerm formats a term: a variable as Name, _name or ?name (anonymous ones as _), an
// aggregate as fn(Var), a constant as [FormatValue].
func FormatTerm(t engine.Term) string {
	if !t.IsVar() {
		return FormatValue(t.Val)
	}
	v := t.Var
	switch c := v[0]; {
	case isAnonymousName(v):
		v = anonymous
	case c >= 'A' && c <= 'Z' || c == '_':
	default:
		v = "?" + v
	}
	if t.Agg != "" {
		return t.Agg + "(" + v + ")"
	}
	return v
}

// FormatValue formats a constant: strings quoted with Go escapes, floats always with a '.'
// or an exponent so that they read back as floats.
func FormatValue(v engine.Value) string {
	switch v.Kind() {
	case engine.KindString:
		return strconv.Quote(v.Str())
	case engine.KindInt:
		return strconv.FormatInt(v.IntVal(), 10)
	case engine.KindFloat:
		s := strconv.FormatFloat(v.FloatVal(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case engine.KindBool:
		return strconv.FormatBool(v.BoolVal())
	}
	return "<invalid>"
}
