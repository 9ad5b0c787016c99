package syntax

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// jsonFact is one line of a facts file: the wire atom of package contract and a tier.
type jsonFact struct {
	Predicate string        `json:"predicate"`
	Args      contract.Args `json:"args"`
	Negated   bool          `json:"negated"`
	Tier      string        `json:"tier"`
}

// ParseJSONFacts reads facts as JSON lines, one object per line, as `docket rules eval
// --facts` takes them. Blank lines are skipped. Each fact gets the id "filename:line" and
// the tier it names, or asserted when it names none. Arguments are values: a string such as
// "?x" is refused, since only patterns hold variables. Decoding is strict (see factReader):
// member names match exactly and once, strings are valid UTF-8.
func ParseJSONFacts(filename string, src []byte) ([]engine.Fact, error) {
	r := &factReader{file: filename, names: map[string]string{}}
	n := bytes.Count(src, []byte("\n")) + 1
	facts := make([]engine.Fact, 0, n)
	lines := make([]int, 0, n)
	for len(src) > 0 {
		r.line++
		line := src
		if k := bytes.IndexByte(src, '\n'); k >= 0 {
			line, src = src[:k], src[k+1:]
		} else {
			src = nil
		}
		if len(line) == 0 || line[0] != '{' && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r.src = line
		f, err := r.fact()
		if err != nil {
			return nil, err
		}
		facts = append(facts, f)
		lines = append(lines, r.line)
	}
	// The ids are carved from one string: one allocation instead of one a fact.
	var ids strings.Builder
	ids.Grow(len(facts) * (len(filename) + 8))
	for _, l := range lines {
		ids.WriteString(filename)
		ids.WriteByte(':')
		ids.WriteString(strconv.Itoa(l))
	}
	block := ids.String()
	for i, l := range lines {
		k := len(filename) + 1 + digits(l)
		facts[i].ID, block = block[:k], block[k:]
	}
	return facts, nil
}

// digits is the length of n in decimal; n > 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// ParseJSONPattern reads one atom in the wire form of contract.Atom, where a string
// argument "?name" is a variable and "?_" an anonymous one.
func ParseJSONPattern(name string, src []byte) (engine.Atom, error) {
	p := Pos{File: name, Line: 1, Col: 1}
	var w contract.Atom
	if err := decodeStrict(p, src, &w); err != nil {
		return engine.Atom{}, err
	}
	a, err := engineAtom(p, w, true)
	if err != nil {
		return engine.Atom{}, err
	}
	lits := []engine.Literal{{Atom: a}}
	numberAnonymous(nil, lits)
	return lits[0].Atom, nil
}

// MarshalJSONPattern encodes a in the wire form of contract.Atom that [ParseJSONPattern]
// reads: variables as "?name", anonymous ones as "?_". It refuses aggregates, which only
// rule heads hold, and string constants that would read back as variables.
func MarshalJSONPattern(a engine.Atom) ([]byte, error) {
	w := contract.Atom{Predicate: a.Pred, Args: make(contract.Args, len(a.Args)), Negated: a.Neg}
	for _, arg := range a.Args {
		t := arg.Term
		switch {
		case t.Agg != "":
			return nil, fmt.Errorf("marshal %s: argument %s aggregates, which only rule heads can", a.Pred, arg.Name)
		case t.IsVar():
			v := t.Var
			if isAnonymousName(v) {
				v = anonymous
			}
			w.Args[arg.Name] = contract.VarValue(v)
		default:
			v := t.Val.Wire()
			if v.IsZero() {
				return nil, fmt.Errorf("marshal %s: argument %s has no value", a.Pred, arg.Name)
			}
			if _, isVar := v.Var(); isVar {
				return nil, fmt.Errorf("marshal %s: the string %q of %s would read back as a variable", a.Pred, v.Str(), arg.Name)
			}
			w.Args[arg.Name] = v
		}
	}
	return json.Marshal(w)
}

// decodeStrict decodes one JSON object into v: unknown fields and trailing data are
// refused, and every refusal is rule_syntax but for integer_range.
func decodeStrict(p Pos, src []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(src))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		if ce, ok := err.(*contract.Error); ok {
			code := contract.CodeRuleSyntax
			if ce.Code == contract.CodeIntegerRange {
				code = ce.Code
			}
			return contract.Errorf(code, "%s: %s", p, ce.Teaching)
		}
		return syntaxError(p, `expected an object {"predicate": "...", "args": {...}}: %v`, err)
	}
	if d.More() {
		return syntaxError(p, "expected one JSON object on the line; put each fact on its own line")
	}
	return nil
}

// engineAtom converts a wire atom, reading "?name" strings as variables when pattern.
func engineAtom(p Pos, w contract.Atom, pattern bool) (engine.Atom, error) {
	if w.Predicate == "" {
		return engine.Atom{}, syntaxError(p, `expected "predicate" to name the atom, e.g. "predicate": "edge"`)
	}
	args := make([]engine.Arg, 0, len(w.Args))
	for _, name := range slices.Sorted(maps.Keys(w.Args)) {
		v := w.Args[name]
		if x, ok := v.Var(); ok {
			switch {
			case !pattern:
				return engine.Atom{}, syntaxError(p, "argument %s of %s is %q, a variable, and a fact holds only values; give the value", name, w.Predicate, v.Str())
			case x != anonymous && isAnonymousName(x):
				return engine.Atom{}, syntaxError(p, "argument %s of %s: the variable name %s is reserved for anonymous variables; write ?_ or choose another name", name, w.Predicate, v.Str())
			}
			args = append(args, engine.Arg{Name: name, Term: engine.V(x)})
			continue
		}
		ev, err := engine.ValueOf(v)
		if err != nil {
			return engine.Atom{}, syntaxError(p, "argument %s of %s: %s", name, w.Predicate, teachingOf(err))
		}
		args = append(args, engine.Arg{Name: name, Term: engine.C(ev)})
	}
	a, err := engine.NewAtom(w.Predicate, w.Negated, args...)
	if err != nil {
		return engine.Atom{}, syntaxError(p, "%s", teachingOf(err))
	}
	return a, nil
}
