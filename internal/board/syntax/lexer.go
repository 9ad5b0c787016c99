package syntax

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
)

// Pos is a position in a source text: a file name and a 1-based line and byte column.
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats p as file:line:col, the prefix of every syntax error.
func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// tokenKind is the lexical class of a token.
type tokenKind uint8

const (
	tokEOF    tokenKind = iota
	tokIdent            // lower-case name: predicate, argument, not, true, false, aggregate
	tokVar              // X, _x, _ or ?x; text is the name without '?'
	tokString           // text is the unquoted value
	tokInt              // text is the literal
	tokFloat            // text is the literal
	tokLParen
	tokRParen
	tokComma
	tokColon
	tokDot
	tokImplies // :-
	tokTilde
	tokID // @id; text is the id without '@'
)

var tokenNames = [...]string{
	tokEOF:     "end of input",
	tokIdent:   "name",
	tokVar:     "variable",
	tokString:  "string",
	tokInt:     "integer",
	tokFloat:   "number",
	tokLParen:  `"("`,
	tokRParen:  `")"`,
	tokComma:   `","`,
	tokColon:   `":"`,
	tokDot:     `"."`,
	tokImplies: `":-"`,
	tokTilde:   `"~"`,
	tokID:      "rule id",
}

// token is one lexeme with the position of its first byte.
type token struct {
	kind tokenKind
	text string
	pos  Pos
}

// describe names t for an error message: its kind and, where it helps, its text.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokIdent, tokInt, tokFloat:
		return strconv.Quote(t.text)
	case tokVar:
		return "variable " + t.text
	case tokString:
		return "string " + strconv.Quote(t.text)
	case tokID:
		return "rule id @" + t.text
	}
	return tokenNames[t.kind]
}

// lexer splits a source text into tokens. A lexical error is reported with its position
// after the lexer has moved past the offending text, so that parsing can resume.
type lexer struct {
	file string
	src  []byte
	off  int
	line int
	col  int
}

func newLexer(file string, src []byte) *lexer {
	return &lexer{file: file, src: src, line: 1, col: 1}
}

func (l *lexer) pos() Pos { return Pos{File: l.file, Line: l.line, Col: l.col} }

// advance moves past n bytes, none of which is a newline.
func (l *lexer) advance(n int) {
	l.off += n
	l.col += n
}

func (l *lexer) errorf(p Pos, format string, args ...any) *contract.Error {
	return syntaxError(p, format, args...)
}

// syntaxError builds the rule_syntax refusal at p.
func syntaxError(p Pos, format string, args ...any) *contract.Error {
	return contract.Errorf(contract.CodeRuleSyntax, "%s: %s", p, fmt.Sprintf(format, args...))
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	p := l.pos()
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: p}, nil
	}
	c := l.src[l.off]
	single := func(k tokenKind) (token, error) {
		l.advance(1)
		return token{kind: k, text: string(c), pos: p}, nil
	}
	switch {
	case c == '(':
		return single(tokLParen)
	case c == ')':
		return single(tokRParen)
	case c == ',':
		return single(tokComma)
	case c == '.':
		return single(tokDot)
	case c == '~':
		return single(tokTilde)
	case c == ':':
		if l.peekByte(1) == '-' {
			l.advance(2)
			return token{kind: tokImplies, text: ":-", pos: p}, nil
		}
		return single(tokColon)
	case c == '"':
		return l.lexString(p)
	case c == '-' || isDigit(c):
		return l.lexNumber(p)
	case c >= 'a' && c <= 'z':
		n := l.span(l.off, isNameByte)
		l.advance(n)
		return token{kind: tokIdent, text: string(l.src[l.off-n : l.off]), pos: p}, nil
	case c >= 'A' && c <= 'Z' || c == '_':
		n := l.span(l.off, isNameByte)
		l.advance(n)
		return token{kind: tokVar, text: string(l.src[l.off-n : l.off]), pos: p}, nil
	case c == '?':
		n := l.span(l.off+1, isNameByte)
		if n == 0 || isDigit(l.src[l.off+1]) {
			l.advance(1)
			return token{}, l.errorf(p, `expected a variable name after "?", a letter or _ first, e.g. ?job_id`)
		}
		l.advance(n + 1)
		return token{kind: tokVar, text: string(l.src[l.off-n : l.off]), pos: p}, nil
	case c == '@':
		n := l.span(l.off+1, isIDByte)
		if n == 0 {
			l.advance(1)
			return token{}, l.errorf(p, `expected a rule id after "@", e.g. @total_rule`)
		}
		l.advance(n + 1)
		return token{kind: tokID, text: string(l.src[l.off-n : l.off]), pos: p}, nil
	}
	r, n := utf8.DecodeRune(l.src[l.off:])
	l.advance(n)
	if r == utf8.RuneError {
		return token{}, l.errorf(p, "the text is not valid UTF-8; save the file as UTF-8")
	}
	return token{}, l.errorf(p, "unexpected character %q; statements are atoms like p(name: value) ending in \".\"", r)
}

// skipSpace skips white space and # comments, tracking lines.
func (l *lexer) skipSpace() error {
	for l.off < len(l.src) {
		switch c := l.src[l.off]; c {
		case '\n':
			l.off++
			l.line++
			l.col = 1
		case ' ', '\t', '\r':
			l.advance(1)
		case '#':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				if l.src[l.off] < utf8.RuneSelf {
					l.advance(1)
					continue
				}
				r, n := utf8.DecodeRune(l.src[l.off:])
				if r == utf8.RuneError && n <= 1 {
					p := l.pos()
					l.advance(1)
					return l.errorf(p, "the text is not valid UTF-8; save the file as UTF-8")
				}
				l.advance(n)
			}
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) peekByte(k int) byte {
	if l.off+k < len(l.src) {
		return l.src[l.off+k]
	}
	return 0
}

// span returns how many bytes from off satisfy ok.
func (l *lexer) span(off int, ok func(byte) bool) int {
	n := 0
	for off+n < len(l.src) && ok(l.src[off+n]) {
		n++
	}
	return n
}

// lexString scans a double-quoted string with Go escapes on one line.
func (l *lexer) lexString(p Pos) (token, error) {
	i := l.off + 1
	for i < len(l.src) && l.src[i] != '"' && l.src[i] != '\n' {
		if l.src[i] == '\\' && i+1 < len(l.src) && l.src[i+1] != '\n' {
			i++ // the escaped byte cannot end the string
		}
		i++
	}
	if i >= len(l.src) || l.src[i] != '"' {
		l.advance(i - l.off) // skip the rest of the line
		return token{}, l.errorf(p, `expected a closing "\"" for the string that starts here; strings end on the line they start`)
	}
	lit := l.src[l.off : i+1]
	l.advance(len(lit))
	s, err := strconv.Unquote(string(lit))
	if err != nil {
		return token{}, l.errorf(p, "the string %s has an invalid escape; use Go escapes such as \\\" \\\\ \\n \\u00e9", lit)
	}
	if !utf8.ValidString(s) {
		return token{}, l.errorf(p, "the string %s is not valid UTF-8; strings hold text, not bytes", lit)
	}
	return token{kind: tokString, text: s, pos: p}, nil
}

// lexNumber scans -?digits(.digits)?([eE][+-]?digits)?. A '.' not followed by a digit ends
// the number, so "1." never swallows a statement's end.
func (l *lexer) lexNumber(p Pos) (token, error) {
	i := l.off
	if l.src[i] == '-' {
		i++
	}
	digits := l.span(i, isDigit)
	if digits == 0 {
		l.advance(1)
		return token{}, l.errorf(p, `expected digits after "-"`)
	}
	i += digits
	kind := tokInt
	if i+1 < len(l.src) && l.src[i] == '.' && isDigit(l.src[i+1]) {
		kind = tokFloat
		i++
		i += l.span(i, isDigit)
	}
	if i < len(l.src) && (l.src[i] == 'e' || l.src[i] == 'E') {
		j := i + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if n := l.span(j, isDigit); n > 0 {
			kind = tokFloat
			i = j + n
		}
	}
	text := string(l.src[l.off:i])
	if i < len(l.src) && (isNameByte(l.src[i])) {
		bad := text + string(l.src[i])
		l.advance(i - l.off + l.span(i, isNameByte))
		return token{}, l.errorf(p, "expected a number, found %q; names start with a letter", bad)
	}
	l.advance(i - l.off)
	return token{kind: kind, text: text, pos: p}, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isIDByte(c byte) bool {
	return isNameByte(c) || c == '.' || c == ':' || c == '/' || c == '#' || c == '-'
}
