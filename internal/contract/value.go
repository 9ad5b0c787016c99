package contract

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// MaxExactInt is the largest integer magnitude a wire integer may have (2^53−1), so that
// every integer survives a trip through any JSON implementation unchanged.
const MaxExactInt = 1<<53 - 1

// ValueKind is the type of a wire Value.
type ValueKind uint8

// Value kinds. The zero kind marks the zero Value, which is not a valid scalar.
const (
	ValueString ValueKind = iota + 1
	ValueInt
	ValueFloat
	ValueBool
)

// Value is one scalar argument on the wire: a JSON string, integer, float or boolean.
// A JSON number without '.' or exponent is an integer, checked against ±[MaxExactInt];
// any other number is a float. In patterns (rule bodies, preconditions) a string of the
// form "?name" is the variable name; see [Value.Var]. Values compare with ==.
type Value struct {
	kind ValueKind
	s    string
	i    int64
	f    float64
	b    bool
}

// StringValue returns a string Value.
func StringValue(s string) Value { return Value{kind: ValueString, s: s} }

// BoolValue returns a boolean Value.
func BoolValue(b bool) Value { return Value{kind: ValueBool, b: b} }

// IntValue returns an integer Value, or an integer_range error outside ±[MaxExactInt].
func IntValue(i int64) (Value, error) {
	if i > MaxExactInt || i < -MaxExactInt {
		return Value{}, Errorf(CodeIntegerRange, "the integer %d is outside ±(2^53−1); pass large numbers as strings", i)
	}
	return Value{kind: ValueInt, i: i}, nil
}

// FloatValue returns a float Value; NaN and infinities are refused.
func FloatValue(f float64) (Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, Errorf(CodeInvalidArgument, "the number %v is not finite; use a finite number", f)
	}
	if f == 0 {
		f = 0 // -0 and 0 are one value
	}
	return Value{kind: ValueFloat, f: f}, nil
}

// VarValue returns the pattern variable name as a Value, "?name".
func VarValue(name string) Value { return StringValue("?" + name) }

// Kind returns v's kind, or 0 for the zero Value.
func (v Value) Kind() ValueKind { return v.kind }

// IsZero reports whether v is the zero (invalid) Value.
func (v Value) IsZero() bool { return v.kind == 0 }

// Str returns v's string; meaningful only for ValueString.
func (v Value) Str() string { return v.s }

// Int returns v's integer; meaningful only for ValueInt.
func (v Value) Int() int64 { return v.i }

// Float returns v's float; meaningful only for ValueFloat.
func (v Value) Float() float64 { return v.f }

// Bool returns v's boolean; meaningful only for ValueBool.
func (v Value) Bool() bool { return v.b }

// Var returns the variable name when v is a string "?name" with name made of letters,
// digits and _, starting with a letter or _. Only patterns read variables; a fact refuses
// them.
func (v Value) Var() (string, bool) {
	if v.kind != ValueString || !strings.HasPrefix(v.s, "?") {
		return "", false
	}
	name := v.s[1:]
	if !validVar(name) {
		return "", false
	}
	return name, true
}

func validVar(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// MarshalJSON encodes v as a JSON scalar; floats always carry a '.' or an exponent so
// that they decode back as floats.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case ValueString:
		if plainJSON(v.s) {
			// What json.Marshal writes for it, without its encoder: Board values are
			// mostly short words, encoded for every View and every node stored.
			b := make([]byte, 0, len(v.s)+2)
			b = append(b, '"')
			b = append(b, v.s...)
			return append(b, '"'), nil
		}
		return json.Marshal(v.s)
	case ValueInt:
		return strconv.AppendInt(nil, v.i, 10), nil
	case ValueFloat:
		b := strconv.AppendFloat(nil, v.f, 'g', -1, 64)
		if !bytes.ContainsAny(b, ".eE") {
			b = append(b, ".0"...)
		}
		return b, nil
	case ValueBool:
		return strconv.AppendBool(nil, v.b), nil
	}
	return nil, Errorf(CodeInvalidArgument, "a value is empty; give a string, number or boolean")
}

// plainJSON reports whether json.Marshal writes s as its own bytes in quotes: printable
// ASCII that needs no escape, HTML's <, > and & included (json.Marshal escapes those).
func plainJSON(s string) bool {
	for i := range len(s) {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// UnmarshalJSON decodes a JSON scalar. null, objects and arrays are refused.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Errorf(CodeInvalidArgument, "a value is empty; give a string, number or boolean")
	}
	switch c := b[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return Errorf(CodeInvalidArgument, "a string value is malformed; send valid JSON")
		}
		*v = StringValue(s)
	case c == 't' || c == 'f':
		var x bool
		if err := json.Unmarshal(b, &x); err != nil {
			return Errorf(CodeInvalidArgument, "a boolean value is malformed; send true or false")
		}
		*v = BoolValue(x)
	case c == '-' || c >= '0' && c <= '9':
		return v.unmarshalNumber(string(b))
	default:
		return Errorf(CodeInvalidArgument,
			"an argument value is %s; arguments are strings, numbers or booleans, never null, objects or lists", kindOfJSON(c))
	}
	return nil
}

// unmarshalTree reads a scalar from n as UnmarshalJSON reads its text: a string's value
// as the strict parse read it (encoding/json reads strict JSON's strings the same), and
// a boolean or a number from its text. Anything UnmarshalJSON refuses is left to it.
func (v *Value) unmarshalTree(n *jnode) bool {
	switch n.kind {
	case '"':
		*v = StringValue(n.str)
	case 'b':
		*v = BoolValue(n.str == "true")
	case '0':
		var x Value
		if x.unmarshalNumber(n.str) != nil {
			return false
		}
		*v = x
	default:
		return false
	}
	return true
}

func (v *Value) unmarshalNumber(s string) error {
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return Errorf(CodeInvalidArgument, "the number %.40s is not a finite float; use a smaller number", s)
		}
		x, err := FloatValue(f)
		if err != nil {
			return err
		}
		*v = x
		return nil
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return Errorf(CodeIntegerRange, "the integer %.40s is outside ±(2^53−1); pass large numbers as strings", s)
	}
	x, err := IntValue(i)
	if err != nil {
		return err
	}
	*v = x
	return nil
}

func kindOfJSON(c byte) string {
	switch c {
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "a list"
	}
	return "not a JSON scalar"
}

// String formats v as in the rule text syntax.
func (v Value) String() string {
	switch v.kind {
	case ValueString:
		return strconv.Quote(v.s)
	case ValueInt, ValueFloat, ValueBool:
		b, _ := v.MarshalJSON()
		return string(b)
	}
	return "<invalid>"
}
