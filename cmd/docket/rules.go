package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
)

type rulesCmd struct {
	Check rulesCheckCmd `cmd:"" help:"Parse and stratify rule files; report every problem with file:line:col."`
	Eval  rulesEvalCmd  `cmd:"" help:"Evaluate rule files to their fixpoint and print every fact with its tier."`
}

type rulesCheckCmd struct {
	Files []string `arg:"" name:"file" help:"Rule files (.dl) to check." type:"existingfile"`
}

type rulesEvalCmd struct {
	Files  []string `arg:"" name:"file" help:"Rule files (.dl) to evaluate." type:"existingfile"`
	Facts  []string `name:"facts" help:"Facts as JSON lines, one {\"predicate\",\"args\",\"negated\"?,\"tier\"?} object per line." type:"existingfile" placeholder:"FILE.jsonl"`
	Tier   string   `name:"tier" default:"asserted" help:"Tier of the facts written in the rule files." enum:"verified,attested,approximate,inductive,uncertain,perceived,asserted"`
	Output string   `short:"o" name:"output" default:"text" enum:"text,json" help:"Output format: text, or json (one object a line)."`
	Only   []string `name:"only" placeholder:"PRED" help:"Print only the facts of this predicate (~PRED for its strong negation); repeat or separate with commas for several."`
	Count  bool     `name:"count" help:"Print how many facts each predicate holds instead of the facts."`
}

// Help is the long help of `docket rules eval`.
func (c *rulesEvalCmd) Help() string {
	return `Facts are printed as they are read from the fixpoint, predicate by predicate (p before ~p), each
predicate's facts ordered by their argument values; nothing is held back to be printed at the end.

Examples:
  docket rules eval calc.dl --facts input.jsonl             every fact, with its tier
  docket rules eval calc.dl --facts input.jsonl -o json     one JSON object a line
  docket rules eval path.dl --only path                     only the path facts
  docket rules eval path.dl --only path,~path -o json       path and its strong negation
  docket rules eval path.dl --count                         how many facts each predicate holds`
}

// program is what a set of rule files holds, with where each rule was written so that
// refusals from the engine can point at the line.
type program struct {
	rules []engine.Rule
	facts []engine.Fact
	pos   map[string]syntax.Pos // rule id -> where it is written
	stmts []syntax.Statement    // every statement of every file, for checks across files
}

// loadProgram parses files; facts written in them take tier. It returns every syntax
// problem, one a file, joined.
func loadProgram(files []string, tier contract.Tier) (*program, error) {
	p := &program{pos: map[string]syntax.Pos{}}
	var errs []error
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		stmts, err := syntax.Parse(name, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.stmts = append(p.stmts, stmts...)
		for _, st := range stmts {
			switch {
			case st.Rule != nil:
				r := *st.Rule
				r.Tier = contract.TierVerified
				if prev, dup := p.pos[r.ID]; dup {
					errs = append(errs, contract.Errorf(contract.CodeRuleSyntax,
						"%s: rule %s is also written at %s; give one of them another @id", st.Pos, r.ID, prev))
					continue
				}
				p.pos[r.ID] = st.Pos
				p.rules = append(p.rules, r)
			case st.Fact != nil:
				p.facts = append(p.facts, engine.Fact{ID: st.Pos.String(), Atom: *st.Fact, Tier: tier})
			}
		}
	}
	return p, errors.Join(errs...)
}

// check adds each rule alone to a fresh engine, so that an unsafe rule is reported at its
// own line, then all of them together, which finds stratification cycles.
func (p *program) check() error {
	var errs []error
	for _, r := range p.rules {
		if _, err := engine.New(engine.Limits{}).AddRules(r); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.pos[r.ID], err))
		}
	}
	defined := map[string]bool{}
	for _, r := range p.rules {
		defined[r.Head.Pred] = true
	}
	for _, f := range p.facts {
		defined[f.Atom.Pred] = true
	}
	errs = append(errs, syntax.MisspeltBuiltins(p.stmts, func(pred string) bool { return defined[pred] })...)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if _, err := engine.New(engine.Limits{}).AddRules(p.rules...); err != nil {
		return err
	}
	return nil
}

func (c *rulesCheckCmd) Run(e *env) error {
	p, err := loadProgram(c.Files, contract.TierAsserted)
	if err == nil {
		err = p.check()
	}
	if err != nil {
		return reportProblems(e, err)
	}
	fmt.Fprintf(e.Stdout, "ok: %d rules, %d facts in %d files\n", len(p.rules), len(p.facts), len(c.Files))
	return nil
}

// reportProblems prints each joined problem on its own line and fails with exit 1.
func reportProblems(e *env, err error) error {
	problems := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		problems = j.Unwrap()
	}
	for _, p := range problems {
		fmt.Fprintln(e.Stderr, p)
	}
	return &exitError{code: exitFailure, err: fmt.Errorf("%d problem(s) found", len(problems))}
}

func (c *rulesEvalCmd) Run(e *env) error {
	tier, err := contract.ParseTier(c.Tier)
	if err != nil {
		return err
	}
	p, err := loadProgram(c.Files, tier)
	if err != nil {
		return reportProblems(e, err)
	}
	for _, name := range c.Facts {
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		facts, err := syntax.ParseJSONFacts(name, src)
		if err != nil {
			return reportProblems(e, err)
		}
		p.facts = append(p.facts, facts...)
	}
	if e.Getenv("GOGC") == "" {
		// A one-shot evaluation keeps nearly everything it allocates until it exits: a
		// collection at every doubling of the heap would scan it again and again (a third
		// of the CPU of a large fixpoint) to free little.
		debug.SetGCPercent(400)
	}
	eng := engine.New(engine.Limits{})
	eng.SetDeltas(false)
	if _, err := eng.AddRules(p.rules...); err != nil {
		return reportProblems(e, err)
	}
	if _, err := eng.Assert(p.facts...); err != nil {
		return reportProblems(e, err)
	}
	p.facts = nil // the engine holds them now
	w := bufio.NewWriterSize(e.Stdout, 64<<10)
	if c.Count {
		err = syntax.WriteCounts(w, eng, c.Only, c.Output == "json")
	} else {
		err = syntax.WriteFacts(w, eng, syntax.Only(c.Only), c.Output == "json")
	}
	return errors.Join(err, w.Flush())
}
