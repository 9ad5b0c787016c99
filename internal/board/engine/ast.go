package engine

import (
	"math"
	"slices"
	"strconv"

	"github.com/docketrun/docket/internal/contract"
)

// MaxExactInt is the largest integer magnitude a Value holds exactly (2^53−1), so that every
// integer survives a trip through JSON numbers unchanged.
const MaxExactInt = 1<<53 - 1

// Kind is the type of a scalar Value.
type Kind uint8

// Value kinds. The zero Kind marks the zero Value, which is not a valid scalar.
const (
	KindString Kind = iota + 1
	KindInt
	KindFloat
	KindBool
)

// Value is a scalar: a string, an exact integer, a float or a boolean. Values are
// comparable with == and usable as map keys; comparison is strict, so Int(1) != String("1")
// and Int(1) != Float(1).
type Value struct {
	kind Kind
	n    int64 // integer, bool (0/1) or float bits
	s    string
}

// String returns a string Value.
func String(s string) Value { return Value{kind: KindString, s: s} }

// Bool returns a boolean Value.
func Bool(b bool) Value {
	if b {
		return Value{kind: KindBool, n: 1}
	}
	return Value{kind: KindBool}
}

// Int returns an integer Value, or an error with code integer_range when i is outside
// ±MaxExactInt: Docket refuses rather than rounds.
func Int(i int64) (Value, error) {
	if i > MaxExactInt || i < -MaxExactInt {
		return Value{}, contract.Errorf(contract.CodeIntegerRange,
			"the integer %d is outside ±(2^53−1); pass large numbers as strings", i)
	}
	return Value{kind: KindInt, n: i}, nil
}

// Float returns a float Value. NaN and infinities are refused; -0 is stored as 0 so that
// equal numbers are equal Values.
func Float(f float64) (Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, contract.Errorf(contract.CodeInvalidArgument, "the number %v is not finite; use a finite number", f)
	}
	if f == 0 {
		f = 0
	}
	return Value{kind: KindFloat, n: int64(math.Float64bits(f))}, nil
}

// Kind returns v's kind, or 0 for the zero Value.
func (v Value) Kind() Kind { return v.kind }

// IsZero reports whether v is the zero (invalid) Value.
func (v Value) IsZero() bool { return v.kind == 0 }

// Str returns v's string; it is meaningful only for KindString.
func (v Value) Str() string { return v.s }

// IntVal returns v's integer; it is meaningful only for KindInt.
func (v Value) IntVal() int64 { return v.n }

// FloatVal returns v's float; it is meaningful only for KindFloat.
func (v Value) FloatVal() float64 { return math.Float64frombits(uint64(v.n)) }

// BoolVal returns v's boolean; it is meaningful only for KindBool.
func (v Value) BoolVal() bool { return v.n != 0 }

// Any returns v as a Go value: string, int64, float64 or bool.
func (v Value) Any() any {
	switch v.kind {
	case KindString:
		return v.s
	case KindInt:
		return v.n
	case KindFloat:
		return v.FloatVal()
	case KindBool:
		return v.BoolVal()
	}
	return nil
}

// String formats v as in the rule text syntax: strings quoted, floats always with a point
// or exponent so that they read back as floats.
func (v Value) String() string { return string(v.AppendTo(nil)) }

// AppendTo appends v's String form to b and returns the extended buffer.
func (v Value) AppendTo(b []byte) []byte {
	switch v.kind {
	case KindString:
		return strconv.AppendQuote(b, v.s)
	case KindInt:
		return strconv.AppendInt(b, v.n, 10)
	case KindFloat:
		n := len(b)
		b = strconv.AppendFloat(b, v.FloatVal(), 'g', -1, 64)
		if !containsAny(string(b[n:]), ".eEn") { // "n" covers NaN/Inf, which Float refuses anyway
			b = append(b, ".0"...)
		}
		return b
	case KindBool:
		return strconv.AppendBool(b, v.BoolVal())
	}
	return append(b, "<invalid>"...)
}

func containsAny(s, chars string) bool {
	for _, c := range s {
		for _, d := range chars {
			if c == d {
				return true
			}
		}
	}
	return false
}

// Term is an argument of an atom: a variable (Var != "") or a constant Value. In a rule
// head, a variable may carry an aggregate function (Agg: count, sum, min or max), which
// makes the rule an aggregate rule grouped by the head's other variables.
type Term struct {
	Var string // variable name without sigil; "" for a constant
	Val Value  // the constant when Var == ""
	Agg string // aggregate function over Var, head only; "" for none
}

// V returns a variable term.
func V(name string) Term { return Term{Var: name} }

// C returns a constant term.
func C(v Value) Term { return Term{Val: v} }

// IsVar reports whether t is a variable.
func (t Term) IsVar() bool { return t.Var != "" }

// Arg is one named argument of an atom.
type Arg struct {
	Name string
	Term Term
}

// Atom is a predicate with named arguments, possibly strongly negated (~p(...)), which is an
// explicit negative fact, distinct from the absence of p. Args are kept sorted by Name, and
// names are unique; [NewAtom] establishes both.
type Atom struct {
	Pred string
	Neg  bool
	Args []Arg
}

// NewAtom returns an atom with its arguments sorted by name. It refuses an empty or
// malformed predicate, a duplicate argument name, and a zero constant.
func NewAtom(pred string, neg bool, args ...Arg) (Atom, error) {
	return MakeAtom(pred, neg, slices.Clone(args))
}

// MakeAtom is NewAtom for a caller that hands args over: the atom keeps args, sorted in
// place, rather than a copy of them, so a caller that built them for the atom (the
// Board converting a wire atom) does not pay for them twice.
func MakeAtom(pred string, neg bool, args []Arg) (Atom, error) {
	if !validName(pred) {
		return Atom{}, contract.Errorf(contract.CodeInvalidArgument,
			"predicate name %q is not valid: use lower-case letters, digits and _, starting with a letter", pred)
	}
	a := Atom{Pred: pred, Neg: neg, Args: args}
	slices.SortFunc(a.Args, func(x, y Arg) int { return cmpString(x.Name, y.Name) })
	for i, arg := range a.Args {
		if !validName(arg.Name) {
			return Atom{}, contract.Errorf(contract.CodeInvalidArgument,
				"argument name %q of %s is not valid: use lower-case letters, digits and _, starting with a letter", arg.Name, pred)
		}
		if i > 0 && a.Args[i-1].Name == arg.Name {
			return Atom{}, contract.Errorf(contract.CodeInvalidArgument,
				"%s names the argument %q twice; give each argument once", pred, arg.Name)
		}
		if !arg.Term.IsVar() && arg.Term.Val.IsZero() {
			return Atom{}, contract.Errorf(contract.CodeInvalidArgument,
				"argument %s of %s has no value", arg.Name, pred)
		}
	}
	return a, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// validName reports whether s is a predicate or argument name: [a-z][a-z0-9_]*.
func validName(s string) bool {
	if s == "" || len(s) > 128 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Get returns the term of the argument named name.
func (a Atom) Get(name string) (Term, bool) {
	i, ok := slices.BinarySearchFunc(a.Args, name, func(arg Arg, n string) int { return cmpString(arg.Name, n) })
	if !ok {
		return Term{}, false
	}
	return a.Args[i].Term, true
}

// Ground reports whether a has no variables.
func (a Atom) Ground() bool {
	for _, arg := range a.Args {
		if arg.Term.IsVar() {
			return false
		}
	}
	return true
}

// String formats a in the rule text syntax, e.g. ~edge(from: 1, to: X).
func (a Atom) String() string { return string(a.AppendTo(make([]byte, 0, 32))) }

// AppendTo appends a's String form to b and returns the extended buffer: the Board
// hashes it into the id it mints for a fact, which so costs no string per atom and
// per argument.
func (a Atom) AppendTo(b []byte) []byte {
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
		b = arg.Term.AppendTo(b)
	}
	return append(b, ')')
}

// String formats t in the rule text syntax: a variable by name (capitalised in text), an
// aggregate as fn(Var), a constant as its Value.
func (t Term) String() string { return string(t.AppendTo(nil)) }

// AppendTo appends t's String form to b and returns the extended buffer.
func (t Term) AppendTo(b []byte) []byte {
	if t.IsVar() {
		if t.Agg != "" {
			return append(append(append(append(b, t.Agg...), '('), t.Var...), ')')
		}
		return append(b, t.Var...)
	}
	return t.Val.AppendTo(b)
}

// Literal is a body element: an atom (which may be a built-in such as add or lt), possibly
// under negation-as-failure (NAF: "not p(...)", true when p cannot be derived).
type Literal struct {
	Atom Atom
	NAF  bool
}

// String formats l in the rule text syntax.
func (l Literal) String() string {
	if l.NAF {
		return "not " + l.Atom.String()
	}
	return l.Atom.String()
}

// Rule is head :- body. ID names the rule in provenance and Explain. Tier caps the tier of
// what the rule derives: a rule an agent asserted cannot derive anything stronger than
// asserted, whatever its premises ("can't be washed green").
type Rule struct {
	ID   string
	Head Atom
	Body []Literal
	Tier contract.Tier
}

// String formats r in the rule text syntax, without its ID and tier.
func (r Rule) String() string {
	s := r.Head.String()
	if len(r.Body) == 0 {
		return s + "."
	}
	s += " :- "
	for i, l := range r.Body {
		if i > 0 {
			s += ", "
		}
		s += l.String()
	}
	return s + "."
}

// errorf is shorthand for building an engine refusal.
func errorf(code contract.Code, format string, args ...any) error {
	return contract.Errorf(code, format, args...)
}
