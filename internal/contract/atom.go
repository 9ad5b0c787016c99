package contract

import (
	"encoding/json"
	"fmt"
)

// Args are an atom's named arguments. encoding/json writes map keys sorted, so an Args
// has one JSON form.
type Args map[string]Value

// JSON is a as JSON with its names in order ("{}" when empty): two Args are the same
// exactly when their JSON is, which is how business keys are compared.
func (a Args) JSON() string {
	if len(a) == 0 {
		return "{}"
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Sprintf("(%d arguments that do not encode)", len(a))
	}
	return string(b)
}

// Atom is a predicate with named arguments on the wire:
//
//	{"predicate": "calculation_input", "args": {"job_id": "calc-001", "quantity": 2}}
//
// Negated marks a strong (explicit) negation, ~p(...) in text. In patterns an argument
// "?x" is the variable x.
type Atom struct {
	Predicate string `json:"predicate"`
	Args      Args   `json:"args"`
	Negated   bool   `json:"negated,omitempty"`
}

// Literal is one element of a rule body or precondition: an atom, possibly under
// negation-as-failure (NAF, "not p(...)" in text).
type Literal struct {
	Predicate string `json:"predicate"`
	Args      Args   `json:"args"`
	Negated   bool   `json:"negated,omitempty"`
	NAF       bool   `json:"naf,omitempty"`
}

// Atom returns l's atom without its NAF flag.
func (l Literal) Atom() Atom { return Atom{Predicate: l.Predicate, Args: l.Args, Negated: l.Negated} }

// Rule is a rule on the wire, head :- body, in the same AST as the text syntax.
// Variables are "?name" strings. An aggregate rule is sent with the
// derive_aggregate operation, which names the aggregated argument separately.
type Rule struct {
	Head Atom      `json:"head"`
	Body []Literal `json:"body"`
}

// FocusedRoot is a Case's root as a caller focuses it.
type FocusedRoot struct {
	CaseID CaseID `json:"caseId"`
	Root   string `json:"root"`
}
