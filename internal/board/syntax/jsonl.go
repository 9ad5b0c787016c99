package syntax

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// factReader decodes the lines of a facts file without encoding/json: a line is one
// object with the members "predicate" (a string), "args" (an object of scalars), and
// optionally "negated" (a boolean) and "tier" (a string). It is stricter than
// encoding/json: member names match exactly (no case folding), no member appears twice,
// strings are valid UTF-8 with no lone surrogate in an escape, and null is never a value.
// Every refusal is rule_syntax (integer_range for an integer beyond ±(2^53−1)) and names
// the line and column.
type factReader struct {
	file  string
	line  int
	src   []byte // the line
	i     int    // the read position in src
	names map[string]string
	buf   []byte       // scratch for unescaped strings
	args  []engine.Arg // scratch for one fact's arguments
}

// jsonLine is what one line holds, before it becomes a fact.
type jsonLine struct {
	pred    string
	negated bool
	tier    contract.Tier
}

func (r *factReader) errorf(format string, args ...any) error {
	return syntaxError(Pos{File: r.file, Line: r.line, Col: r.i + 1}, format, args...)
}

// intern returns b as a string, sharing one copy per distinct name: the predicates and
// argument names of a facts file repeat on every line.
func (r *factReader) intern(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	r.names[s] = s
	return s
}

func (r *factReader) space() {
	for r.i < len(r.src) {
		switch r.src[r.i] {
		case ' ', '\t', '\r', '\n':
			r.i++
		default:
			return
		}
	}
}

// expect consumes c after optional whitespace.
func (r *factReader) expect(c byte, what string) error {
	r.space()
	if r.i >= len(r.src) || r.src[r.i] != c {
		return r.errorf(`expected an object {"predicate": "...", "args": {...}}: expected %s`, what)
	}
	r.i++
	return nil
}

// object reads the members of an object whose '{' is consumed, calling member for each
// name; member reads the value.
func (r *factReader) object(member func(name []byte) error) error {
	r.space()
	if r.i < len(r.src) && r.src[r.i] == '}' {
		r.i++
		return nil
	}
	for {
		r.space()
		if r.i >= len(r.src) || r.src[r.i] != '"' {
			return r.errorf(`expected an object {"predicate": "...", "args": {...}}: expected a member name in double quotes`)
		}
		name, err := r.str()
		if err != nil {
			return err
		}
		if err := r.expect(':', "':' after a member name"); err != nil {
			return err
		}
		r.space()
		if err := member(name); err != nil {
			return err
		}
		r.space()
		if r.i < len(r.src) {
			switch r.src[r.i] {
			case ',':
				r.i++
				continue
			case '}':
				r.i++
				return nil
			}
		}
		return r.errorf(`expected an object {"predicate": "...", "args": {...}}: expected ',' or '}' after a member`)
	}
}

// str reads a string whose opening quote is at r.i. The bytes it returns are valid only
// until the next call.
func (r *factReader) str() ([]byte, error) {
	r.i++ // the opening quote
	start := r.i
	// The fast path: printable ASCII without escapes, read in place.
	for r.i < len(r.src) {
		c := r.src[r.i]
		if c == '"' {
			r.i++
			return r.src[start : r.i-1], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		r.i++
	}
	r.buf = append(r.buf[:0], r.src[start:r.i]...)
	for r.i < len(r.src) {
		c := r.src[r.i]
		switch {
		case c == '"':
			r.i++
			return r.buf, nil
		case c < 0x20:
			return nil, r.errorf("a string holds a control character (byte %#x); escape it, e.g. \\n", c)
		case c == '\\':
			if err := r.escape(); err != nil {
				return nil, err
			}
		case c >= utf8.RuneSelf:
			ru, n := utf8.DecodeRune(r.src[r.i:])
			if ru == utf8.RuneError && n == 1 {
				return nil, r.errorf("a string is not valid UTF-8 (byte %#x); send UTF-8 text", c)
			}
			r.buf = append(r.buf, r.src[r.i:r.i+n]...)
			r.i += n
		default:
			r.buf = append(r.buf, c)
			r.i++
		}
	}
	return nil, r.errorf("a string is not closed; end it with a double quote")
}

// escape reads one escape sequence at r.i into r.buf.
func (r *factReader) escape() error {
	if r.i+1 >= len(r.src) {
		return r.errorf("a string ends in the middle of an escape")
	}
	c := r.src[r.i+1]
	r.i += 2
	switch c {
	case '"', '\\', '/':
		r.buf = append(r.buf, c)
	case 'b':
		r.buf = append(r.buf, '\b')
	case 'f':
		r.buf = append(r.buf, '\f')
	case 'n':
		r.buf = append(r.buf, '\n')
	case 'r':
		r.buf = append(r.buf, '\r')
	case 't':
		r.buf = append(r.buf, '\t')
	case 'u':
		ru, ok := r.hex4()
		if !ok {
			return r.errorf(`a \u escape needs four hex digits`)
		}
		if utf16.IsSurrogate(ru) {
			lo, ok := rune(0), false
			if r.i+1 < len(r.src) && r.src[r.i] == '\\' && r.src[r.i+1] == 'u' {
				r.i += 2
				lo, ok = r.hex4()
			}
			ru = utf16.DecodeRune(ru, lo)
			if !ok || ru == utf8.RuneError {
				return r.errorf(`a \u escape is half of a surrogate pair; send the character, or both halves of its pair`)
			}
		}
		r.buf = utf8.AppendRune(r.buf, ru)
	default:
		return r.errorf("a string holds the unknown escape \\%c", c)
	}
	return nil
}

func (r *factReader) hex4() (rune, bool) {
	if r.i+4 > len(r.src) {
		return 0, false
	}
	var ru rune
	for _, c := range r.src[r.i : r.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		ru = ru<<4 | rune(c)
	}
	r.i += 4
	return ru, true
}

// literal consumes word (true, false, null) when it is next.
func (r *factReader) literal(word string) bool {
	if bytes.HasPrefix(r.src[r.i:], []byte(word)) {
		r.i += len(word)
		return true
	}
	return false
}

// boolean reads true or false.
func (r *factReader) boolean(member string) (bool, error) {
	switch {
	case r.literal("true"):
		return true, nil
	case r.literal("false"):
		return false, nil
	}
	return false, r.errorf(`expected "%s" to be true or false`, member)
}

// value reads an argument value: a string, a number or a boolean.
func (r *factReader) value(pred, name string) (engine.Value, error) {
	if r.i >= len(r.src) {
		return engine.Value{}, r.errorf("argument %s of %s has no value", name, pred)
	}
	switch c := r.src[r.i]; {
	case c == '"':
		b, err := r.str()
		if err != nil {
			return engine.Value{}, err
		}
		if len(b) > 1 && b[0] == '?' {
			if _, isVar := contract.StringValue(string(b)).Var(); isVar {
				return engine.Value{}, r.errorf("argument %s of %s is %q, a variable, and a fact holds only values; give the value", name, pred, b)
			}
		}
		return engine.String(string(b)), nil
	case c == 't' || c == 'f':
		b, err := r.boolean(name)
		return engine.Bool(b), err
	case c == '-' || c >= '0' && c <= '9':
		return r.number(pred, name)
	case c == 'n' && r.literal("null"):
		return engine.Value{}, r.errorf("argument %s of %s: an argument value is null; arguments are strings, numbers or booleans, never null, objects or lists", name, pred)
	case c == '{' || c == '[':
		return engine.Value{}, r.errorf("argument %s of %s: an argument value is %s; arguments are strings, numbers or booleans, never null, objects or lists", name, pred, kindName(c))
	}
	return engine.Value{}, r.errorf("argument %s of %s is not a JSON value", name, pred)
}

func kindName(c byte) string {
	if c == '{' {
		return "an object"
	}
	return "a list"
}

// number reads a JSON number: an integer when it has no fraction or exponent, checked
// against ±(2^53−1), a float otherwise.
func (r *factReader) number(pred, name string) (engine.Value, error) {
	start := r.i
	if r.src[r.i] == '-' {
		r.i++
	}
	digits := func() int {
		n := 0
		for r.i < len(r.src) && r.src[r.i] >= '0' && r.src[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	bad := func() (engine.Value, error) {
		return engine.Value{}, r.errorf("argument %s of %s is not a valid JSON number", name, pred)
	}
	intStart := r.i
	if n := digits(); n == 0 || (n > 1 && r.src[intStart] == '0') {
		return bad()
	}
	float := false
	if r.i < len(r.src) && r.src[r.i] == '.' {
		r.i++
		if digits() == 0 {
			return bad()
		}
		float = true
	}
	if r.i < len(r.src) && (r.src[r.i] == 'e' || r.src[r.i] == 'E') {
		r.i++
		if r.i < len(r.src) && (r.src[r.i] == '+' || r.src[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return bad()
		}
		float = true
	}
	text := r.src[start:r.i]
	if float {
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			return engine.Value{}, r.errorf("argument %s of %s: the number %.40s is not a finite float; use a smaller number", name, pred, text)
		}
		v, err := engine.Float(f)
		if err != nil {
			return engine.Value{}, r.errorf("argument %s of %s: %s", name, pred, teachingOf(err))
		}
		return v, nil
	}
	var n int64
	if len(text) <= 17 { // at most 16 digits and a sign: no int64 overflow
		for _, c := range text {
			if c != '-' {
				n = n*10 + int64(c-'0')
			}
		}
		if text[0] == '-' {
			n = -n
		}
	} else {
		n = engine.MaxExactInt + 1
	}
	v, err := engine.Int(n)
	if err != nil {
		return engine.Value{}, contract.Errorf(contract.CodeIntegerRange,
			"%s: argument %s of %s: the integer %.40s is outside ±(2^53−1); pass large numbers as strings",
			Pos{File: r.file, Line: r.line, Col: start + 1}, name, pred, text)
	}
	return v, nil
}

// fact reads one line into a fact without its id; the line is not blank.
func (r *factReader) fact() (engine.Fact, error) {
	r.i = 0
	if err := r.expect('{', "'{'"); err != nil {
		return engine.Fact{}, err
	}
	var l jsonLine
	var seen uint8 // predicate, args, negated, tier
	r.args = r.args[:0]
	err := r.object(func(name []byte) error {
		bit, known := memberBit(name)
		if !known {
			return r.errorf(`expected an object {"predicate": "...", "args": {...}}: unknown member %q (members: predicate, args, negated, tier)`, name)
		}
		if seen&bit != 0 {
			return r.errorf("the member %q appears twice; give it once", name)
		}
		seen |= bit
		switch bit {
		case 1:
			if r.i >= len(r.src) || r.src[r.i] != '"' {
				return r.errorf(`expected "predicate" to be a string, e.g. "predicate": "edge"`)
			}
			b, err := r.str()
			if err != nil {
				return err
			}
			l.pred = r.intern(b)
		case 2:
			if r.i >= len(r.src) || r.src[r.i] != '{' {
				return r.errorf(`expected "args" to be an object, e.g. "args": {"from": 1}`)
			}
			r.i++
			return r.object(func(name []byte) error {
				argName := r.intern(name)
				for _, a := range r.args {
					if a.Name == argName {
						return r.errorf("the argument %q appears twice; give it once", argName)
					}
				}
				v, err := r.value(l.pred, argName)
				if err != nil {
					return err
				}
				r.args = append(r.args, engine.Arg{Name: argName, Term: engine.C(v)})
				return nil
			})
		case 4:
			b, err := r.boolean("negated")
			if err != nil {
				return err
			}
			l.negated = b
		case 8:
			if r.i >= len(r.src) || r.src[r.i] != '"' {
				return r.errorf(`expected "tier" to be a string, e.g. "tier": "attested"`)
			}
			b, err := r.str()
			if err != nil || len(b) == 0 { // "" is the default, asserted
				return err
			}
			t, err := contract.ParseTier(r.intern(b))
			if err != nil {
				return r.errorf("%v", err)
			}
			l.tier = t
		}
		return nil
	})
	if err != nil {
		return engine.Fact{}, err
	}
	r.space()
	if r.i < len(r.src) {
		return engine.Fact{}, r.errorf("expected one JSON object on the line; put each fact on its own line")
	}
	r.i = 0
	if seen&1 == 0 || l.pred == "" {
		return engine.Fact{}, r.errorf(`expected "predicate" to name the atom, e.g. "predicate": "edge"`)
	}
	if l.tier == 0 {
		l.tier = contract.TierAsserted
	}
	a, err := engine.NewAtom(l.pred, l.negated, r.args...)
	if err != nil {
		return engine.Fact{}, r.errorf("%s", teachingOf(err))
	}
	return engine.Fact{Atom: a, Tier: l.tier}, nil
}

func memberBit(name []byte) (uint8, bool) {
	switch string(name) {
	case "predicate":
		return 1, true
	case "args":
		return 2, true
	case "negated":
		return 4, true
	case "tier":
		return 8, true
	}
	return 0, false
}
