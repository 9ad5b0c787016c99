package capability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
)

// checkActions converts the Actions, checking that every variable they use is a param or
// bound by a precondition.
func (v *validation) checkActions() {
	names := map[string]bool{}
	for i, a := range v.m.Actions {
		at := func(key string) string { return v.loc.at(v.loc.line("action", i, key)) }
		label := fmt.Sprintf("action %d", i+1)
		if v.checkName(at("name"), "action", a.Name) {
			label = "action " + a.Name
			if names[a.Name] {
				v.add(at("name"), "%s is declared twice; give each action its own name", label)
			}
			names[a.Name] = true
		}
		if strings.TrimSpace(a.Description) == "" {
			v.add(at("description"), "%s has no description; say what it does, since the model chooses actions by it", label)
		}
		out := board.Action{Name: a.Name, Description: a.Description, Approval: a.Approval}
		switch {
		case a.Approval == "":
			out.Approval = board.ApprovalPerson // a forgotten approval asks a person, never runs unasked
		case a.Approval != board.ApprovalNone && a.Approval != board.ApprovalPerson && !validName(a.Approval):
			v.add(at("approval"), "%s has approval %q; use none, person, or a delegation class name (lower-case letters, digits and _)", label, a.Approval)
		}
		params := v.checkParams(i, label, a.Params, &out)
		bound := v.checkPreconditions(at("preconditions"), label, a.Preconditions, params, &out)
		v.checkBindings(at("bindings"), label, a.Bindings, params, bound, &out)
		v.checkEffects(at("effects"), label, a.Effects, params, bound, &out)
		if a.Execution == nil {
			if len(out.Effects) == 0 && len(a.Effects) == 0 {
				v.add(at("name"), "%s has neither an execution nor effects, so it would do nothing; add effects or an [action.execution]", label)
			}
		} else {
			out.Execution = v.checkExecution(at("execution"), label, a.Execution)
		}
		v.decl.Actions = append(v.decl.Actions, out)
	}
}

// checkParams converts the params and returns their names.
func (v *validation) checkParams(i int, label string, specs []paramSpec, out *board.Action) map[string]bool {
	params := map[string]bool{}
	for j, p := range specs {
		where := v.loc.at(v.paramLine(i, j))
		if v.checkName(where, label+" param", p.Name) {
			if params[p.Name] {
				v.add(where, "%s declares the param %s twice", label, p.Name)
			}
			params[p.Name] = true
		}
		if !slices.Contains(paramTypes, board.ParamType(p.Type)) {
			v.add(where, "%s param %s has type %q; use string, integer, number or boolean", label, p.Name, p.Type)
		}
		out.Params = append(out.Params, board.Param{Name: p.Name, Type: board.ParamType(p.Type), Description: p.Description, Optional: p.Optional})
	}
	return params
}

// paramLine finds the j-th [[action.param]] header inside the i-th [[action]].
func (v *validation) paramLine(i, j int) int {
	from, to := v.loc.section("action", i)
	n := -1
	for k := max(from, 0); k < to; k++ {
		if name, array, ok := header(v.loc.lines[k]); ok && array && name == "action.param" {
			if n++; n == j {
				return k + 1
			}
		}
	}
	return v.loc.line("action", i, "param")
}

// checkPreconditions parses the preconditions and returns the variables they bind: those
// of positive literals. A not literal's variables must be params or bound, or anonymous.
func (v *validation) checkPreconditions(where, label string, texts []string, params map[string]bool, out *board.Action) map[string]bool {
	bound := map[string]bool{}
	var naf []engine.Literal
	for _, text := range texts {
		l, err := syntax.ParseLiteral("", text)
		if err != nil {
			v.addErr(where, fmt.Errorf("%s precondition %q: %w", label, text, inlineSyntax(err)))
			continue
		}
		out.Preconditions = append(out.Preconditions, l)
		if l.NAF {
			naf = append(naf, l)
			continue
		}
		for _, arg := range l.Atom.Args {
			if arg.Term.IsVar() {
				bound[arg.Term.Var] = true
			}
		}
	}
	for _, l := range naf {
		for _, arg := range l.Atom.Args {
			if x := arg.Term.Var; x != "" && !params[x] && !bound[x] && !isAnonymous(x) {
				v.add(where, "%s: the variable %s of %s is neither a param nor bound by a positive precondition; bind it first or use _", label, syntax.FormatTerm(arg.Term), syntax.FormatLiteral(l))
			}
		}
	}
	return bound
}

// checkBindings requires each binding to fill a declared param from a variable that a
// positive precondition binds.
func (v *validation) checkBindings(where, label string, bindings map[string]string, params, bound map[string]bool, out *board.Action) {
	for _, p := range sortedKeys(bindings) {
		x := strings.TrimPrefix(bindings[p], "?")
		if !params[p] {
			v.add(where, "%s binds %s, which is not one of its params; declare [[action.param]] name = %q", label, p, p)
		}
		if !bound[x] {
			v.add(where, "%s binds %s from %q, which no positive precondition binds; write a precondition such as result(%s: ?%s)", label, p, bindings[p], p, x)
		}
		out.Bindings = append(out.Bindings, board.Binding{Param: p, Var: x})
	}
}

// checkEffects parses the effects; "~p(...)" consumes p. Every variable must be a param or
// bound; a consuming effect may also use anonymous variables.
func (v *validation) checkEffects(where, label string, texts []string, params, bound map[string]bool, out *board.Action) {
	for _, text := range texts {
		a, err := syntax.ParseAtom("", text)
		if err != nil {
			v.addErr(where, fmt.Errorf("%s effect %q: %w", label, text, inlineSyntax(err)))
			continue
		}
		e := board.Effect{Atom: a, Consume: a.Neg}
		e.Atom.Neg = false
		v.checkPredicate(where, label+" effect", a.Pred)
		if v.words[a.Pred] && !e.Consume {
			// Attested facts come only through a Source; an effect that
			// produced a Source word would let an Action stand in for the read.
			v.add(where, "%s: the effect %s produces %s, a word a Source attests; produce another predicate, or read it through an execution's returns", label, text, a.Pred)
		}
		for _, arg := range a.Args {
			x := arg.Term.Var
			if x == "" || params[x] || bound[x] || e.Consume && isAnonymous(x) {
				continue
			}
			v.add(where, "%s: the effect %s uses %s, which is neither a param nor bound by a precondition", label, text, syntax.FormatTerm(arg.Term))
		}
		out.Effects = append(out.Effects, e)
	}
}

// checkExecution converts an Action's execution: its tool, kind, source types and the
// returns mapping, whose predicates must be words of a matching Source.
func (v *validation) checkExecution(where, label string, e *executionSpec) *board.Execution {
	out := &board.Execution{Tool: e.Tool, SourceTypes: slices.Clone(e.SourceTypes), Kind: board.ExecutionKind(e.Kind)}
	if !toolRE().MatchString(e.Tool) {
		v.add(where, "%s runs tool %q; name a tool as vendor.name@N, e.g. docket.workspace.read_json@1", label, e.Tool)
	}
	if !slices.Contains(execKinds, out.Kind) {
		v.add(where, "%s has execution kind %q; use read, write or run", label, e.Kind)
	}
	v.checkExecutionSource(where, label, e, out)
	words := map[string]bool{}
	for _, t := range e.SourceTypes {
		if !slices.Contains(sourceTypes, t) {
			v.add(where, "%s names source type %q; use file, http, db or mcp", label, t)
			continue
		}
		found := false
		for _, s := range v.m.Sources {
			if s.Type == t {
				found = true
				for _, w := range s.Words {
					words[w] = true
				}
			}
		}
		if !found {
			v.add(where, "%s runs on a %s source, but the package declares none; add a [[source]] with type = %q", label, t, t)
		}
	}
	for _, r := range e.Returns {
		if !v.checkPredicate(where, label+" returns predicate", r.Predicate) {
			continue
		}
		if !words[r.Predicate] {
			v.add(where, "%s returns %s, which is not a word of a source of its source_types; add it to that [[source]]'s words", label, r.Predicate)
		}
		if len(r.Args) == 0 {
			v.add(where, "%s returns %s with no args; map each argument to a \"$column\"", label, r.Predicate)
		}
		for _, name := range sortedKeys(r.Args) {
			v.checkName(where, label+" returns argument", name)
			if col := r.Args[name]; strings.HasPrefix(col, "$") && !columnRE().MatchString(col) {
				v.add(where, "%s returns %s.%s from %q; a column is $ and a lower-case name, e.g. $job_id", label, r.Predicate, name, col)
			}
		}
		out.Returns = append(out.Returns, board.Return{Predicate: r.Predicate, Args: r.Args})
	}
	return out
}

// isAnonymous reports whether x is a variable Parse made from a lone '_' (_1, _2, …).
func isAnonymous(x string) bool {
	if len(x) < 2 || x[0] != '_' {
		return false
	}
	return strings.Trim(x[1:], "0123456789") == ""
}

// checkExecutionSource sets out.Source, the name of the package's Source the Tool runs
// against, which the authority prefers when a Connection binds several Sources of one
// type: the [[source]] the execution names with source, which must be of one of its
// source_types, else the only [[source]] of those types.
func (v *validation) checkExecutionSource(where, label string, e *executionSpec, out *board.Execution) {
	var names []string
	for _, s := range v.m.Sources {
		if slices.Contains(e.SourceTypes, s.Type) {
			names = append(names, s.Name)
		}
	}
	switch {
	case e.Source != "" && !slices.Contains(names, e.Source):
		v.add(where, "%s runs against source %q, which is not a [[source]] of its source_types; name one of %v", label, e.Source, names)
	case e.Source != "":
		out.Source = e.Source
	case len(names) == 1:
		out.Source = names[0]
	}
}
