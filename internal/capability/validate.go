package capability

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
)

var (
	idRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_\-]*(\.[a-z0-9][a-z0-9_\-]*)*$`) })
	versionRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.\-]+)?$`)
	})
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*$`) }) // and at most maxName bytes: validName
	toolRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z][a-z0-9_\-]*(\.[a-z][a-z0-9_\-]*)+@[1-9][0-9]*$`)
	})
	columnRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$[a-z_][a-z0-9_]*$`) })
	colPosRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^1:(\d+): `) })
)

// maxName is the longest name of a predicate, field or approval, in bytes.
const maxName = 128

// validName reports whether name is lower-case letters, digits and _, starting with a
// letter, and at most maxName bytes. The length is checked apart from the pattern: a
// counted repetition ({0,127}) compiles to a program of one state per count at every
// start of every docket process, the hook's included (docs/coding-agents.md, "Speed").
func validName(name string) bool { return len(name) <= maxName && nameRE().MatchString(name) }

var (
	sourceTypes = []string{"file", "http", "db", "mcp"}
	paramTypes  = []board.ParamType{board.ParamString, board.ParamInt, board.ParamFloat, board.ParamBool}
	execKinds   = []board.ExecutionKind{board.KindRead, board.KindWrite, board.KindRun}
)

// validation carries what checking one package needs.
type validation struct {
	checker
	loc    *locator
	m      manifest
	rules  []engine.Rule
	heads  map[string][]engine.Rule // rules by head predicate
	ruleAt map[string]string        // rule id → file:line:col
	words  map[string]bool          // predicates some Source attests
	decl   board.Declarations
}

// validate checks a decoded manifest against itself and the parsed rules and builds the
// declarations. Problems are collected in v.problems.
func (v *validation) validate(files [][]syntax.Statement) {
	m := v.m
	top := func(key string) string { return v.loc.at(v.loc.line("", 0, key)) }
	switch {
	case m.ID == "":
		v.add(top("id"), `id is required, e.g. id = "acme.invoices"`)
	case !idRE().MatchString(m.ID) || len(m.ID) > 128:
		v.add(top("id"), "id %q is not valid: use lower-case letters, digits, '_' and '-', in dot-separated parts starting with a letter", m.ID)
	}
	switch {
	case m.Version == "":
		v.add(top("version"), `version is required, e.g. version = "1.0.0"`)
	case !versionRE().MatchString(m.Version):
		v.add(top("version"), "version %q is not MAJOR.MINOR.PATCH (optionally -prerelease), e.g. 1.0.0", m.Version)
	}
	if strings.TrimSpace(m.Title) == "" {
		v.add(top("title"), "title is required: a short name people read in the console")
	}
	v.decl.Release = m.ID + "@" + m.Version
	v.checkRules(files)
	v.checkSources()
	v.checkActions()
	v.checkBuiltins(files)
	v.checkCaseTypes()
}

// checkBuiltins refuses a rule body that misspells a built-in (mull for mul): read as a
// relation nothing in the package produces, its rule would never fire.
func (v *validation) checkBuiltins(files [][]syntax.Statement) {
	for _, f := range files {
		for _, err := range syntax.MisspeltBuiltins(f, v.produced) {
			v.addErr("", err)
		}
	}
}

// checkRules collects the rules of every file, refusing facts, repeated ids and rules that
// are not range-restricted.
func (v *validation) checkRules(files [][]syntax.Statement) {
	v.heads = map[string][]engine.Rule{}
	ids := map[string]string{}
	v.ruleAt = ids
	for _, f := range files {
		for _, s := range f {
			where := s.Pos.String()
			if s.Fact != nil {
				v.add(where, "%s is a fact, and a capability declares rules only; facts come from Sources and agents, so turn it into a rule or remove it", syntax.FormatAtom(*s.Fact))
				continue
			}
			r := *s.Rule
			r.ID = v.m.ID + "/" + r.ID
			r.Tier = contract.TierVerified
			if prev, dup := ids[r.ID]; dup {
				v.add(where, "the rule id %s is already used at %s; give each rule its own @id or remove the repeated rule", r.ID, prev)
				continue
			}
			ids[r.ID] = where
			if err := checkRule(r); err != nil {
				v.addErr(where, err)
				continue
			}
			v.rules = append(v.rules, r)
			v.heads[r.Head.Pred] = append(v.heads[r.Head.Pred], r)
		}
	}
	v.checkProgram()
	v.decl.Rules = v.rules
}

// checkSources converts the Source requirements and collects their words.
func (v *validation) checkSources() {
	v.words = map[string]bool{}
	names := map[string]bool{}
	for i, s := range v.m.Sources {
		at := func(key string) string { return v.loc.at(v.loc.line("source", i, key)) }
		label := fmt.Sprintf("source %d", i+1)
		if v.checkName(at("name"), "source", s.Name) {
			label = "source " + s.Name
			if names[s.Name] {
				v.add(at("name"), "%s is declared twice; give each source its own name", label)
			}
			names[s.Name] = true
		}
		if !slices.Contains(sourceTypes, s.Type) {
			v.add(at("type"), "%s has type %q; use one of file, http, db, mcp", label, s.Type)
		}
		if len(s.Words) == 0 {
			v.add(at("words"), "%s has no words; list the predicates its facts may carry", label)
		}
		seen := map[string]bool{}
		for _, w := range s.Words {
			if !v.checkPredicate(at("words"), label+" word", w) {
				continue
			}
			if seen[w] {
				v.add(at("words"), "%s lists the word %s twice", label, w)
			}
			seen[w] = true
			v.words[w] = true
		}
		tier := contract.TierAttested
		if s.Tier != "" {
			t, err := contract.ParseTier(s.Tier)
			if err != nil {
				v.add(at("tier"), "%s: %v", label, err)
			}
			tier = t
		}
		v.decl.Sources = append(v.decl.Sources, board.SourceRequirement{Name: s.Name, Type: s.Type, Words: slices.Clone(s.Words), Tier: tier})
	}
}

// checkName reports whether name is a valid name, and records a problem when it is not.
func (v *validation) checkName(where, what, name string) bool {
	if name == "" {
		v.add(where, "the %s has no name; add name = \"…\"", what)
		return false
	}
	if !validName(name) {
		v.add(where, "the %s name %q is not valid: use lower-case letters, digits and _, starting with a letter", what, name)
		return false
	}
	return true
}

// checkPredicate is checkName for predicates, which also may not be built-ins.
func (v *validation) checkPredicate(where, what, name string) bool {
	if name == "" {
		v.add(where, "the %s is required; name a predicate", what)
		return false
	}
	if !v.checkName(where, what, name) {
		return false
	}
	if engine.IsBuiltin(name) {
		v.add(where, "the %s %s is a built-in; choose another predicate name", what, name)
		return false
	}
	return true
}

// checkTier parses a required tier.
func (v *validation) checkTier(where, what, s string) contract.Tier {
	if s == "" {
		v.add(where, "%s is required: one of verified, attested, approximate, inductive, uncertain, perceived, asserted", what)
		return 0
	}
	t, err := contract.ParseTier(s)
	if err != nil {
		v.add(where, "%s: %v", what, err)
	}
	return t
}

// produced reports whether something in the package can put pred on the Board.
func (v *validation) produced(pred string) bool {
	if v.words[pred] || len(v.heads[pred]) > 0 {
		return true
	}
	for _, a := range v.decl.Actions {
		for _, e := range a.Effects {
			if !e.Consume && e.Atom.Pred == pred {
				return true
			}
		}
		if a.Execution != nil {
			for _, r := range a.Execution.Returns {
				if r.Predicate == pred {
					return true
				}
			}
		}
	}
	return false
}

// checkCaseTypes converts the Case Types, checking each contract against what the package
// produces and derives.
func (v *validation) checkCaseTypes() {
	names := map[string]bool{}
	for i, ct := range v.m.CaseTypes {
		at := func(key string) string { return v.loc.at(v.loc.line("case_type", i, key)) }
		label := fmt.Sprintf("case type %d", i+1)
		if v.checkName(at("name"), "case type", ct.Name) {
			label = "case type " + ct.Name
			if names[ct.Name] {
				v.add(at("name"), "%s is declared twice; give each case type its own name", label)
			}
			names[ct.Name] = true
		}
		out := board.CaseType{
			Name: ct.Name, Title: ct.Title, Description: ct.Description,
			KeyPredicate: ct.Key.Predicate, KeyArgs: slices.Clone(ct.Key.Args),
			Opening: ct.Opening, Acceptance: ct.Acceptance,
			OncePerCase:   slices.Clone(ct.OncePerCase),
			Exploration:   ct.Name == board.ExplorationCaseType,
			DirectActions: ct.DirectActions,
		}
		for _, a := range ct.OncePerCase {
			if !slices.ContainsFunc(v.m.Actions, func(s actionSpec) bool { return s.Name == a }) {
				v.add(at("once_per_case"), "%s names %s in once_per_case, which is not an action of the package; name a declared action", label, a)
			}
		}
		empty := ct.Key.Predicate == "" && len(ct.Key.Args) == 0 && ct.Opening == "" && ct.OpeningFloor == "" && ct.Acceptance == "" && ct.MinimumGroundingFloor == ""
		if out.Exploration && empty {
			v.decl.CaseTypes = append(v.decl.CaseTypes, out)
			continue
		}
		if v.checkPredicate(at("key"), label+" key predicate", ct.Key.Predicate) && !v.produced(ct.Key.Predicate) {
			v.add(at("key"), "%s is keyed by %s, which nothing in the package produces; make it a Source word, a rule head or an action's effect or returns", label, ct.Key.Predicate)
		}
		if len(ct.Key.Args) == 0 {
			v.add(at("key"), "%s has no key args; name the arguments that identify a Case, e.g. args = [\"job_id\"]", label)
		}
		seen := map[string]bool{}
		for _, a := range ct.Key.Args {
			if v.checkName(at("key"), label+" key argument", a) && seen[a] {
				v.add(at("key"), "%s names the key argument %s twice", label, a)
			}
			seen[a] = true
		}
		if v.checkPredicate(at("opening"), label+" opening predicate", ct.Opening) {
			if !v.produced(ct.Opening) {
				v.add(at("opening"), "%s opens on %s, which nothing in the package produces; make it a Source word, a rule head or an action's effect or returns", label, ct.Opening)
			}
			v.checkKeyed(at("opening"), label, "opening", ct.Opening, ct.Key.Args)
		}
		out.OpeningFloor = v.checkTier(at("opening_floor"), label+" opening_floor", ct.OpeningFloor)
		if v.checkPredicate(at("acceptance"), label+" acceptance predicate", ct.Acceptance) {
			if len(v.heads[ct.Acceptance]) == 0 {
				v.add(at("acceptance"), "%s accepts on %s, which no rule derives; acceptance must be derived, so add a rule with %s(...) as its head", label, ct.Acceptance, ct.Acceptance)
			}
			v.checkKeyed(at("acceptance"), label, "acceptance", ct.Acceptance, ct.Key.Args)
		}
		out.Floor = v.checkTier(at("minimum_grounding_floor"), label+" minimum_grounding_floor", ct.MinimumGroundingFloor)
		v.decl.CaseTypes = append(v.decl.CaseTypes, out)
	}
}

// checkKeyed requires every rule head and returns mapping of pred to carry the key args,
// so that the predicate can be matched to a Case's business key.
func (v *validation) checkKeyed(where, label, role, pred string, keys []string) {
	for _, r := range v.heads[pred] {
		for _, k := range keys {
			if _, ok := r.Head.Get(k); !ok {
				v.add(where, "%s: the rule %s derives the %s predicate %s without the key argument %s; add %s to its head", label, r.ID, role, pred, k, k)
			}
		}
	}
	for _, a := range v.decl.Actions {
		if a.Execution == nil {
			continue
		}
		for _, ret := range a.Execution.Returns {
			if ret.Predicate != pred {
				continue
			}
			for _, k := range keys {
				if _, ok := ret.Args[k]; !ok {
					v.add(where, "%s: action %s returns the %s predicate %s without the key argument %s; map it in returns", label, a.Name, role, pred, k)
				}
			}
		}
	}
}

// inlineSyntax rewords a syntax error in a one-line text ("1:5: …") as "column 5: …".
func inlineSyntax(err error) error {
	ce, ok := err.(*contract.Error)
	if !ok {
		return err
	}
	return &contract.Error{Code: ce.Code, Teaching: colPosRE().ReplaceAllString(ce.Teaching, "column $1: "), Err: ce.Err}
}

// sortedKeys returns m's keys in order, so that problems come out deterministically.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
