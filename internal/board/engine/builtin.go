package engine

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Built-ins. A built-in is written like an atom and takes exactly the
// arguments listed here, no more and no fewer:
//
//	guards     eq neq lt lte gt gte contains   {left, right}
//	           between                         {value, low, high}
//	producers  add sub mul div mod pow idiv imod min max concat   {left, right, result}
//	           neg abs sign sqrt                                  {value, result}
//
// Every input must be bound (by a positive literal or an earlier producer's result) before a
// built-in runs; a producer binds result, or checks it when it is already bound. Built-ins
// run as soon as their inputs are bound, whatever their place in the body.
//
// Guards compare; they never fail with an error. eq and neq are strict (1 ≠ 1.0 ≠ "1").
// lt lte gt gte between order numbers numerically (an integer and a float compare by value),
// strings bytewise and booleans false < true; values of different sorts are unordered, so
// the guard is false. contains is true when both are strings and left contains right.
//
// Producers compute exactly or refuse with the code arithmetic; the mutation that needed the
// value is then refused as a whole. Integers stay integers: add sub mul pow (with an exponent
// ≥ 0) on integers give an integer, and a result beyond ±(2^53−1) is refused, never rounded.
// div on two integers gives an integer only when the division is exact; otherwise it is
// refused (use idiv, or a float operand). idiv truncates toward zero and imod takes the sign
// of the dividend; both take integers only. mod on integers is imod, on floats math.Mod. When
// either operand is a float the result is a float (integers within ±(2^53−1) convert
// exactly). Division by zero, a non-finite float, sqrt of a negative number and a
// non-number operand are refused. min and max return the smaller or larger operand itself
// (numbers by value, or two strings bytewise). sign returns the integer −1, 0 or 1. concat
// joins the text of two scalars (strings as they are, other values as written in rules).
type builtin struct {
	name string
	in   []string // input argument names, in call order
	out  string   // result argument name; "" for a guard
	// fn computes the built-in. A guard returns ok=false to reject; a producer returns its
	// result or an error that explains, in lower case, why no exact result exists.
	fn func(in []Value) (v Value, ok bool, err error)
}

// maxConcatLen caps the length of a string built by concat, so that a recursive rule cannot
// grow one string without bound, in bytes.
const maxConcatLen = 1 << 20

var (
	argsLR  = []string{"left", "right"}
	argsV   = []string{"value"}
	argsVLH = []string{"value", "low", "high"}
)

// builtinTable lists the built-ins. It is never modified.
var builtinTable = [...]builtin{
	{name: "eq", in: argsLR, fn: guard(func(a, b Value) bool { return a == b })},
	{name: "neq", in: argsLR, fn: guard(func(a, b Value) bool { return a != b })},
	{name: "lt", in: argsLR, fn: order(func(c int) bool { return c < 0 })},
	{name: "lte", in: argsLR, fn: order(func(c int) bool { return c <= 0 })},
	{name: "gt", in: argsLR, fn: order(func(c int) bool { return c > 0 })},
	{name: "gte", in: argsLR, fn: order(func(c int) bool { return c >= 0 })},
	{name: "contains", in: argsLR, fn: guard(func(a, b Value) bool {
		return a.kind == KindString && b.kind == KindString && strings.Contains(a.s, b.s)
	})},
	{name: "between", in: argsVLH, fn: func(in []Value) (Value, bool, error) {
		lo, ok1 := compare(in[1], in[0])
		hi, ok2 := compare(in[0], in[2])
		return Value{}, ok1 && ok2 && lo <= 0 && hi <= 0, nil
	}},
	{name: "add", in: argsLR, out: "result", fn: binaryOp(add)},
	{name: "sub", in: argsLR, out: "result", fn: binaryOp(sub)},
	{name: "mul", in: argsLR, out: "result", fn: binaryOp(mul)},
	{name: "div", in: argsLR, out: "result", fn: binaryOp(div)},
	{name: "mod", in: argsLR, out: "result", fn: binaryOp(mod)},
	{name: "pow", in: argsLR, out: "result", fn: binaryOp(pow)},
	{name: "idiv", in: argsLR, out: "result", fn: binaryOp(idiv)},
	{name: "imod", in: argsLR, out: "result", fn: binaryOp(imod)},
	{name: "min", in: argsLR, out: "result", fn: binaryOp(func(a, b Value) (Value, error) { return pick(a, b, -1) })},
	{name: "max", in: argsLR, out: "result", fn: binaryOp(func(a, b Value) (Value, error) { return pick(a, b, 1) })},
	{name: "concat", in: argsLR, out: "result", fn: binaryOp(concat)},
	{name: "neg", in: argsV, out: "result", fn: unaryOp(neg)},
	{name: "abs", in: argsV, out: "result", fn: unaryOp(abs)},
	{name: "sign", in: argsV, out: "result", fn: unaryOp(sign)},
	{name: "sqrt", in: argsV, out: "result", fn: unaryOp(sqrt)},
}

// builtinNamed returns the built-in called name, or nil.
func builtinNamed(name string) *builtin {
	for i := range builtinTable {
		if builtinTable[i].name == name {
			return &builtinTable[i]
		}
	}
	return nil
}

// IsBuiltin reports whether name is a built-in; such a name cannot be a fact's predicate or
// a rule's head.
func IsBuiltin(name string) bool { return builtinNamed(name) != nil }

// NearestBuiltin returns the signature of the built-in that a body atom over an unknown
// predicate most likely misspells, such as "mul(left, right, result)" for
// mull(left: U, right: Q, result: S): a built-in that takes exactly the atom's argument
// names and whose name is a near miss of its predicate ([contract.Nearest]). Such an atom
// is read as a relation that nothing fills, so its rule can never fire and nothing else
// says why. ok is false when the predicate is a built-in or no built-in is near.
func NearestBuiltin(a Atom) (signature string, ok bool) {
	if IsBuiltin(a.Pred) {
		return "", false
	}
	var names []string
	for i := range builtinTable {
		b := &builtinTable[i]
		want := append([]string(nil), b.in...)
		if b.out != "" {
			want = append(want, b.out)
		}
		if sameNames(want, a.Args) {
			names = append(names, b.name)
		}
	}
	name, ok := contract.Nearest(a.Pred, names)
	if !ok {
		return "", false
	}
	return builtinNamed(name).signature(), true
}

// sameNames reports whether args are named exactly names, in any order.
func sameNames(names []string, args []Arg) bool {
	if len(names) != len(args) {
		return false
	}
	for _, n := range names {
		found := false
		for _, a := range args {
			found = found || a.Name == n
		}
		if !found {
			return false
		}
	}
	return true
}

// signature returns the built-in's arguments as written, e.g. "add(left, right, result)".
func (b *builtin) signature() string {
	args := append([]string(nil), b.in...)
	if b.out != "" {
		args = append(args, b.out)
	}
	return b.name + "(" + strings.Join(args, ", ") + ")"
}

func guard(f func(a, b Value) bool) func([]Value) (Value, bool, error) {
	return func(in []Value) (Value, bool, error) { return Value{}, f(in[0], in[1]), nil }
}

func order(f func(c int) bool) func([]Value) (Value, bool, error) {
	return func(in []Value) (Value, bool, error) {
		c, ok := compare(in[0], in[1])
		return Value{}, ok && f(c), nil
	}
}

func binaryOp(f func(a, b Value) (Value, error)) func([]Value) (Value, bool, error) {
	return func(in []Value) (Value, bool, error) {
		v, err := f(in[0], in[1])
		return v, err == nil, err
	}
}

func unaryOp(f func(a Value) (Value, error)) func([]Value) (Value, bool, error) {
	return func(in []Value) (Value, bool, error) {
		v, err := f(in[0])
		return v, err == nil, err
	}
}

// compare orders a and b: numbers by value, strings bytewise, booleans false < true. ok is
// false when they are of different sorts.
func compare(a, b Value) (c int, ok bool) {
	switch {
	case a.kind == KindInt && b.kind == KindInt:
		return cmpOrdered(a.n, b.n), true
	case isNumber(a) && isNumber(b):
		return cmpOrdered(toFloat(a), toFloat(b)), true
	case a.kind == KindString && b.kind == KindString:
		return strings.Compare(a.s, b.s), true
	case a.kind == KindBool && b.kind == KindBool:
		return cmpOrdered(a.n, b.n), true
	}
	return 0, false
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isNumber(v Value) bool { return v.kind == KindInt || v.kind == KindFloat }

// toFloat converts a number; integers within ±(2^53−1) convert exactly.
func toFloat(v Value) float64 {
	if v.kind == KindInt {
		return float64(v.n)
	}
	return v.FloatVal()
}

var (
	errNotNumber = errors.New("takes numbers")
	errDivZero   = errors.New("divides by zero")
	errOverflow  = errors.New("leaves the exact integer range ±(2^53−1)")
)

// numbers classifies an operand pair: both integers, or both convertible to float.
func numbers(a, b Value) (ints bool, err error) {
	if !isNumber(a) || !isNumber(b) {
		return false, errNotNumber
	}
	return a.kind == KindInt && b.kind == KindInt, nil
}

func exactInt(i int64) (Value, error) {
	if i > MaxExactInt || i < -MaxExactInt {
		return Value{}, errOverflow
	}
	return Value{kind: KindInt, n: i}, nil
}

func finite(f float64) (Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, errors.New("has no finite result")
	}
	return Float(f)
}

func add(a, b Value) (Value, error) {
	ints, err := numbers(a, b)
	if err != nil {
		return Value{}, err
	}
	if ints {
		return exactInt(a.n + b.n) // operands are within 2^53, so int64 cannot overflow
	}
	return finite(toFloat(a) + toFloat(b))
}

func sub(a, b Value) (Value, error) {
	ints, err := numbers(a, b)
	if err != nil {
		return Value{}, err
	}
	if ints {
		return exactInt(a.n - b.n)
	}
	return finite(toFloat(a) - toFloat(b))
}

func mul(a, b Value) (Value, error) {
	ints, err := numbers(a, b)
	if err != nil {
		return Value{}, err
	}
	if ints {
		return mulInt(a.n, b.n)
	}
	return finite(toFloat(a) * toFloat(b))
}

func mulInt(a, b int64) (Value, error) {
	if a != 0 && absInt(b) > MaxExactInt/absInt(a) {
		return Value{}, errOverflow
	}
	return exactInt(a * b)
}

func absInt(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

func div(a, b Value) (Value, error) {
	ints, err := numbers(a, b)
	if err != nil {
		return Value{}, err
	}
	if ints {
		if b.n == 0 {
			return Value{}, errDivZero
		}
		if a.n%b.n != 0 {
			return Value{}, errors.New("is not exact (use idiv for integer division, or a float operand)")
		}
		return exactInt(a.n / b.n)
	}
	if toFloat(b) == 0 {
		return Value{}, errDivZero
	}
	return finite(toFloat(a) / toFloat(b))
}

func mod(a, b Value) (Value, error) {
	ints, err := numbers(a, b)
	if err != nil {
		return Value{}, err
	}
	if ints {
		return imod(a, b)
	}
	if toFloat(b) == 0 {
		return Value{}, errDivZero
	}
	return finite(math.Mod(toFloat(a), toFloat(b)))
}

func integers(a, b Value) error {
	if a.kind != KindInt || b.kind != KindInt {
		return errors.New("takes integers")
	}
	if b.n == 0 {
		return errDivZero
	}
	return nil
}

func idiv(a, b Value) (Value, error) {
	if err := integers(a, b); err != nil {
		return Value{}, err
	}
	return exactInt(a.n / b.n)
}

func imod(a, b Value) (Value, error) {
	if err := integers(a, b); err != nil {
		return Value{}, err
	}
	return exactInt(a.n % b.n)
}

func pow(a, b Value) (Value, error) {
	ints, err := numbers(a, b)
	if err != nil {
		return Value{}, err
	}
	if ints && b.n >= 0 {
		result, base, exp := int64(1), a.n, b.n
		for exp > 0 {
			if exp&1 == 1 {
				v, err := mulInt(result, base)
				if err != nil {
					return Value{}, err
				}
				result = v.n
			}
			exp >>= 1
			if exp > 0 {
				v, err := mulInt(base, base)
				if err != nil {
					return Value{}, err
				}
				base = v.n
			}
		}
		return exactInt(result)
	}
	return finite(math.Pow(toFloat(a), toFloat(b)))
}

// pick returns a when it is ordered before b (dir −1, min) or after it (dir 1, max), else b.
func pick(a, b Value, dir int) (Value, error) {
	c, ok := compare(a, b)
	if !ok || a.kind == KindBool {
		return Value{}, errors.New("takes two numbers or two strings")
	}
	if c == dir || c == 0 {
		return a, nil
	}
	return b, nil
}

func concat(a, b Value) (Value, error) {
	s := text(a) + text(b)
	if len(s) > maxConcatLen {
		return Value{}, fmt.Errorf("would build a string longer than %d bytes", maxConcatLen)
	}
	return String(s), nil
}

// text is a scalar's text for concat: a string as it is, anything else as written in rules.
func text(v Value) string {
	if v.kind == KindString {
		return v.s
	}
	return v.String()
}

func neg(a Value) (Value, error) {
	switch a.kind {
	case KindInt:
		return exactInt(-a.n)
	case KindFloat:
		return Float(-a.FloatVal())
	}
	return Value{}, errNotNumber
}

func abs(a Value) (Value, error) {
	switch a.kind {
	case KindInt:
		return exactInt(absInt(a.n))
	case KindFloat:
		return Float(math.Abs(a.FloatVal()))
	}
	return Value{}, errNotNumber
}

func sign(a Value) (Value, error) {
	if !isNumber(a) {
		return Value{}, errNotNumber
	}
	f := toFloat(a)
	switch {
	case f < 0:
		return exactInt(-1)
	case f > 0:
		return exactInt(1)
	}
	return exactInt(0)
}

func sqrt(a Value) (Value, error) {
	if !isNumber(a) {
		return Value{}, errNotNumber
	}
	if toFloat(a) < 0 {
		return Value{}, errors.New("has no real root of a negative number")
	}
	return Float(math.Sqrt(toFloat(a)))
}
