package board

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// The wire (contract) and engine forms of atoms and rules differ: the wire spells a
// variable "?name" and keeps arguments in a map; the engine keeps sorted arguments and
// typed terms. These functions are the one translation between them.

func asContractError(err error) (*contract.Error, bool) {
	return errors.AsType[*contract.Error](err)
}

// anon numbers anonymous variables ("?_") so that each occurrence is a fresh variable,
// as the text syntax does (_1, _2, …).
type anon struct{ n int }

// engineAtom converts a wire atom. In a pattern, "?name" is a variable; in a fact it is
// refused, since facts are ground.
func engineAtom(pred string, args contract.Args, neg, pattern bool, an *anon) (engine.Atom, error) {
	list := make([]engine.Arg, 0, len(args))
	// Sorted, so that anonymous variables are numbered the same way every time (a map's
	// order is random) and as the text syntax numbers them. An atom's few names are
	// sorted on the stack.
	var small [8]string
	names := small[:0]
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := args[name]
		if vn, ok := v.Var(); ok {
			if !pattern {
				return engine.Atom{}, contract.Errorf(contract.CodeInvalidArgument,
					"argument %s of %s is %q, a variable; a fact is ground: give a value", name, pred, v.Str())
			}
			if reservedAnon(vn) {
				return engine.Atom{}, contract.Errorf(contract.CodeInvalidArgument,
					"argument %s of %s is the variable ?%s; names of the form _<digits> are reserved for anonymous variables: use ?_ or another name", name, pred, vn)
			}
			if vn == "_" {
				an.n++
				vn = "_" + strconv.Itoa(an.n)
			}
			list = append(list, engine.Arg{Name: name, Term: engine.V(vn)})
			continue
		}
		ev, err := engine.ValueOf(v)
		if err != nil {
			return engine.Atom{}, err
		}
		list = append(list, engine.Arg{Name: name, Term: engine.C(ev)})
	}
	return engine.MakeAtom(pred, neg, list)
}

// engineRule converts a wire rule; agg, when non-nil, makes the head argument agg.Into the
// aggregate agg.Function over agg.Of.
func engineRule(id string, r contract.Rule, agg *contract.Aggregate, tier contract.Tier) (engine.Rule, error) {
	var an anon
	head, err := engineAtom(r.Head.Predicate, r.Head.Args, r.Head.Negated, true, &an)
	if err != nil {
		return engine.Rule{}, err
	}
	if agg != nil {
		switch agg.Function {
		case "count", "sum", "min", "max":
		default:
			return engine.Rule{}, contract.Errorf(contract.CodeInvalidArgument,
				"the aggregate function %q is unknown; use count, sum, min or max", agg.Function)
		}
		if _, taken := head.Get(agg.Into); taken {
			return engine.Rule{}, contract.Errorf(contract.CodeInvalidArgument,
				"the head of the aggregate rule already has %q; name the aggregated argument in aggregate.into only", agg.Into)
		}
		args := append(head.Args, engine.Arg{Name: agg.Into, Term: engine.Term{Var: agg.Of, Agg: agg.Function}})
		if head, err = engine.NewAtom(head.Pred, head.Neg, args...); err != nil {
			return engine.Rule{}, err
		}
	}
	out := engine.Rule{ID: id, Head: head, Tier: tier}
	for _, l := range r.Body {
		a, err := engineAtom(l.Predicate, l.Args, l.Negated, true, &an)
		if err != nil {
			return engine.Rule{}, err
		}
		out.Body = append(out.Body, engine.Literal{Atom: a, NAF: l.NAF})
	}
	return out, nil
}

// wireArgs converts engine arguments; variables become "?name" and an aggregate term its
// variable (the aggregate itself travels in contract.Node.Aggregate).
func wireArgs(args []engine.Arg) contract.Args {
	out := make(contract.Args, len(args))
	for _, a := range args {
		switch {
		case reservedAnon(a.Term.Var):
			// Numbered anonymous variables go back to "?_"; reading renumbers them alike.
			out[a.Name] = contract.VarValue("_")
		case a.Term.IsVar():
			out[a.Name] = contract.VarValue(a.Term.Var)
		default:
			out[a.Name] = a.Term.Val.Wire()
		}
	}
	return out
}

func wireAtom(a engine.Atom) contract.Atom {
	return contract.Atom{Predicate: a.Pred, Args: wireArgs(a.Args), Negated: a.Neg}
}

func wireRule(r engine.Rule) *contract.Rule {
	out := &contract.Rule{Head: wireAtom(r.Head)}
	for _, l := range r.Body {
		out.Body = append(out.Body, contract.Literal{Predicate: l.Atom.Pred, Args: wireArgs(l.Atom.Args), Negated: l.Atom.Neg, NAF: l.NAF})
	}
	return out
}

// wireAggregate returns the aggregate of r's head, if it has one.
func wireAggregate(r engine.Rule) *contract.Aggregate {
	for _, a := range r.Head.Args {
		if a.Term.Agg != "" {
			return &contract.Aggregate{Function: a.Term.Agg, Of: a.Term.Var, Into: a.Name}
		}
	}
	return nil
}

// keyAtom is the pattern pred(key...) that matches facts about a business key.
func keyAtom(pred string, key contract.Args) (engine.Atom, error) {
	return engineAtom(pred, key, false, false, nil)
}

// reservedAnon reports whether name has the form _<digits>, the names given to anonymous
// variables.
func reservedAnon(name string) bool {
	digits, ok := strings.CutPrefix(name, "_")
	if !ok || digits == "" {
		return false
	}
	_, err := strconv.Atoi(digits)
	return err == nil
}
