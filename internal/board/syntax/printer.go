package syntax

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

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
func FormatAtom(a engine.Atom) string { return string(AppendAtom(nil, a)) }

// AppendAtom appends the text [FormatAtom] gives a to b.
func AppendAtom(b []byte, a engine.Atom) []byte {
	if a.Neg {
		b = append(b, '~')
	}
	b = append(b, a.Pred...)
	b = append(b, '(')
	for i, arg := range a.Args {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, arg.Name...)
		b = append(b, ": "...)
		if arg.Term.IsVar() {
			b = append(b, FormatTerm(arg.Term)...)
		} else {
			b = AppendValue(b, arg.Term.Val)
		}
	}
	return append(b, ')')
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
func FormatValue(v engine.Value) string { return string(AppendValue(nil, v)) }

// AppendValue appends the text [FormatValue] gives v to b.
func AppendValue(b []byte, v engine.Value) []byte {
	switch v.Kind() {
	case engine.KindString:
		return strconv.AppendQuote(b, v.Str())
	case engine.KindInt:
		return strconv.AppendInt(b, v.IntVal(), 10)
	case engine.KindFloat:
		return appendFloat(b, v.FloatVal())
	case engine.KindBool:
		return strconv.AppendBool(b, v.BoolVal())
	}
	return append(b, "<invalid>"...)
}

// appendFloat appends f with a '.' or an exponent, so that it reads back as a float.
func appendFloat(b []byte, f float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	if !bytes.ContainsAny(b[start:], ".e") {
		b = append(b, ".0"...)
	}
	return b
}

// AppendJSONValue appends v as JSON, byte for byte as encoding/json writes its wire form
// (contract.Value): strings with HTML-safe escapes, floats with a '.' or an exponent.
func AppendJSONValue(b []byte, v engine.Value) []byte {
	switch v.Kind() {
	case engine.KindString:
		return AppendJSONString(b, v.Str())
	case engine.KindFloat:
		return appendFloat(b, v.FloatVal())
	}
	return AppendValue(b, v)
}

// AppendJSONString appends s as a JSON string, as encoding/json writes it.
func AppendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			// The rare case: let encoding/json escape it. Marshaling a Go string cannot
			// fail (invalid UTF-8 becomes U+FFFD), so an error here is a broken invariant.
			out, err := json.Marshal(s)
			if err != nil {
				panic("syntax: marshal a string: " + err.Error())
			}
			return append(b, out...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
