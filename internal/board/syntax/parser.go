package syntax

import (
	"math"
	"strconv"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// Statement is one fact or rule of a rule file, with the position where it starts.
// Exactly one of Fact and Rule is set.
type Statement struct {
	Pos  Pos
	Fact *engine.Atom // a ground atom asserted by the file
	Rule *engine.Rule // a rule; its Tier is left zero for the caller to set
	// BodyPos is where each literal of Rule.Body is written, in order, so that a problem
	// found after parsing can point at its line.
	BodyPos []Pos
}

// anonymous is the placeholder name of a lone '_' until [numberAnonymous] renames it.
const anonymous = "_"

// isAggregate reports whether name is a function a head argument may apply to a body
// variable.
func isAggregate(name string) bool {
	switch name {
	case "count", "sum", "min", "max":
		return true
	}
	return false
}

// MaxErrors bounds the errors [ParseAll] reports for one file.
const MaxErrors = 20

// Parse reads the statements of a rule file. filename only labels positions in errors. The
// error, if any, is a *contract.Error (rule_syntax or integer_range) for the first problem.
func Parse(filename string, src []byte) ([]Statement, error) {
	stmts, errs := ParseAll(filename, src)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return stmts, nil
}

// ParseAll is [Parse] that goes on after an error: it skips to the end of the broken
// statement (the next '.') and reads on, so that a file's problems can be fixed in one pass.
// It returns the statements it could read and at most [MaxErrors] errors, each a
// *contract.Error; a file with errors must not be used.
func ParseAll(filename string, src []byte) ([]Statement, []error) {
	p := newParser(filename, src)
	var stmts []Statement
	var errs []error
	ids := map[string]Pos{}
	for len(errs) < MaxErrors {
		start := p.taken
		t, err := p.peek(0)
		if err != nil {
			errs = append(errs, err)
			p.recover(start)
			continue
		}
		if t.kind == tokEOF {
			break
		}
		s, err := p.statement()
		if err != nil {
			errs = append(errs, err)
			p.recover(start)
			continue
		}
		if s.Rule != nil {
			if prev, dup := ids[s.Rule.ID]; dup {
				errs = append(errs, syntaxError(s.Pos, "the rule id %s is already used by the rule at %s; give each rule its own @id or remove the repeated rule", s.Rule.ID, prev))
				continue
			}
			ids[s.Rule.ID] = s.Pos
		}
		stmts = append(stmts, s)
	}
	return stmts, errs
}

// recover skips to just past the '.' that ends the statement in error, unless the error
// came after that '.' was read (start is the count of tokens taken before the statement).
// Lexical errors met on the way are dropped: the lexer has already moved past them, and
// one error per statement is enough.
func (p *parser) recover(start int) {
	if p.afterDot && p.taken > start {
		p.err = nil
		return
	}
	for {
		p.err = nil
		t, err := p.peek(0)
		if err != nil {
			continue
		}
		if p.take(); t.kind == tokEOF || t.kind == tokDot {
			return
		}
	}
}

// ParseAtom reads one atom or pattern, such as `~calculation_input(job_id: ?j)`, with an
// optional final '.'. Variables are allowed; name labels positions in errors.
func ParseAtom(name, src string) (engine.Atom, error) {
	p := newParser(name, []byte(src))
	a, err := p.atom(false)
	if err != nil {
		return engine.Atom{}, err
	}
	if err := p.end(); err != nil {
		return engine.Atom{}, err
	}
	lits := []engine.Literal{{Atom: a.atom}}
	numberAnonymous(nil, lits)
	return lits[0].Atom, nil
}

// ParseLiteral reads one body literal: an atom, or "not" and an atom.
func ParseLiteral(name, src string) (engine.Literal, error) {
	lits, err := ParseLiterals(name, src)
	if err != nil {
		return engine.Literal{}, err
	}
	if len(lits) != 1 {
		return engine.Literal{}, syntaxError(Pos{File: name, Line: 1, Col: 1}, "expected one literal, found %d; give a single atom", len(lits))
	}
	return lits[0], nil
}

// ParseLiterals reads a comma-separated conjunction of literals, as in a rule body or a
// query, with an optional final '.'. Anonymous variables are numbered across the whole list.
func ParseLiterals(name, src string) ([]engine.Literal, error) {
	p := newParser(name, []byte(src))
	var lits []engine.Literal
	for {
		l, err := p.literal()
		if err != nil {
			return nil, err
		}
		lits = append(lits, l)
		t, err := p.peek(0)
		if err != nil {
			return nil, err
		}
		if t.kind != tokComma {
			break
		}
		p.take()
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	numberAnonymous(nil, lits)
	return lits, nil
}

// parser is a recursive-descent parser over a lexer with two tokens of lookahead, enough to
// tell "not p(...)" from a predicate named not.
type parser struct {
	lex *lexer
	buf [2]token // lookahead; buf[:n] are valid
	n   int
	// afterDot records that the last token taken was a '.', and taken counts the tokens
	// taken, so that error recovery does not skip the statement after a complete one.
	afterDot bool
	taken    int
	// err is the lexical error met in this statement. It sticks until recover drops it:
	// the lexer has moved past the bad input, so reading on would parse what follows it
	// as if the bad character were not there ("a!(." read as "a(.").
	err error
}

func newParser(file string, src []byte) *parser { return &parser{lex: newLexer(file, src)} }

// peek returns the token k places ahead without consuming it.
func (p *parser) peek(k int) (token, error) {
	for p.n <= k {
		if p.err != nil {
			return token{}, p.err
		}
		t, err := p.lex.next()
		if err != nil {
			p.err = err
			return token{}, err
		}
		p.buf[p.n] = t
		p.n++
	}
	return p.buf[k], nil
}

// take consumes the token last peeked at position 0.
func (p *parser) take() token {
	t := p.buf[0]
	p.buf[0] = p.buf[1]
	p.n--
	p.afterDot = t.kind == tokDot
	p.taken++
	return t
}

// is reports whether the next token is of kind k; a lexical error reads as false and is
// reported by the expect that follows.
func (p *parser) is(k tokenKind) bool {
	t, err := p.peek(0)
	return err == nil && t.kind == k
}

// expect consumes a token of kind k or fails with "expected <what>, found <t>; <hint>".
func (p *parser) expect(k tokenKind, what, hint string) (token, error) {
	t, err := p.peek(0)
	if err != nil {
		return token{}, err
	}
	if t.kind != k {
		if k == tokIdent && t.kind == tokVar {
			hint = "names are lower case, and a capital letter starts a variable"
		}
		if hint != "" {
			hint = "; " + hint
		}
		return token{}, syntaxError(t.pos, "expected %s, found %s%s", what, t.describe(), hint)
	}
	return p.take(), nil
}

// end accepts an optional '.' and then requires the end of input.
func (p *parser) end() error {
	t, err := p.peek(0)
	if err != nil {
		return err
	}
	if t.kind == tokDot {
		p.take()
	}
	_, err = p.expect(tokEOF, "the end of the text", "")
	return err
}

// statement reads [@id] head ( "." | ":-" body "." ).
func (p *parser) statement() (Statement, error) {
	start, _ := p.peek(0)
	var id *token
	if start.kind == tokID {
		t := p.take()
		id = &t
	}
	if err := p.refuseNAFHead(); err != nil {
		return Statement{}, err
	}
	head, err := p.atom(true)
	if err != nil {
		return Statement{}, err
	}
	t, err := p.peek(0)
	if err != nil {
		return Statement{}, err
	}
	switch t.kind {
	case tokDot:
		p.take()
		if id != nil {
			return Statement{}, syntaxError(id.pos, "only rules take an @id, and %s is a fact; remove the id", head.atom.Pred)
		}
		if head.firstVar != nil {
			return Statement{}, syntaxError(*head.firstVar, "a fact must be ground, but %s has a variable here; give a value, or add a body with :-", head.atom.Pred)
		}
		a := head.atom
		return Statement{Pos: start.pos, Fact: &a}, nil
	case tokImplies:
		p.take()
	default:
		return Statement{}, syntaxError(t.pos, `expected "." to end the fact or ":-" to start a rule body, found %s`, t.describe())
	}
	var body []engine.Literal
	var bodyPos []Pos
	for {
		lp, err := p.peek(0)
		if err != nil {
			return Statement{}, err
		}
		l, err := p.literal()
		if err != nil {
			return Statement{}, err
		}
		body = append(body, l)
		bodyPos = append(bodyPos, lp.pos)
		t, err := p.peek(0)
		if err != nil {
			return Statement{}, err
		}
		if t.kind == tokDot {
			p.take()
			break
		}
		if t.kind != tokComma {
			return Statement{}, syntaxError(t.pos, `expected "," before the next literal or "." to end the rule, found %s`, t.describe())
		}
		p.take()
	}
	r := engine.Rule{Head: head.atom, Body: body}
	numberAnonymous(&r.Head, r.Body)
	if id != nil {
		r.ID = id.text
	} else {
		r.ID = DefaultRuleID(r)
	}
	return Statement{Pos: start.pos, Rule: &r, BodyPos: bodyPos}, nil
}

// MisspeltBuiltins returns a rule_syntax error for each body literal of stmts that reads a
// predicate nothing defines (defined reports false) and is a near miss of a built-in, such
// as mull(left: U, right: Q, result: S) for mul: without it such a rule never fires, and a
// Case whose acceptance needs it can never complete while nothing says why. Each error
// names the literal's file:line:col and the built-in's signature.
func MisspeltBuiltins(stmts []Statement, defined func(pred string) bool) []error {
	var errs []error
	for _, s := range stmts {
		if s.Rule == nil {
			continue
		}
		for i, l := range s.Rule.Body {
			if defined(l.Atom.Pred) {
				continue
			}
			sig, ok := engine.NearestBuiltin(l.Atom)
			if !ok {
				continue
			}
			at := s.Pos
			if i < len(s.BodyPos) {
				at = s.BodyPos[i]
			}
			errs = append(errs, syntaxError(at, "%s is not a built-in and nothing defines it (no rule, fact or Source); did you mean the built-in %s?", l.Atom.Pred, sig))
		}
	}
	return errs
}

// refuseNAFHead explains that "not" cannot start a head, rather than reading it as a
// predicate named not.
func (p *parser) refuseNAFHead() error {
	t, err := p.peek(0)
	if err != nil || t.kind != tokIdent || t.text != "not" {
		return err
	}
	u, err := p.peek(1)
	if err != nil {
		return err
	}
	if u.kind == tokIdent || u.kind == tokTilde {
		return syntaxError(t.pos, "negation-as-failure (not) belongs only in rule bodies; a fact or head may be strongly negated with ~")
	}
	return nil
}

// literal reads "not" atom or atom.
func (p *parser) literal() (engine.Literal, error) {
	t, err := p.peek(0)
	if err != nil {
		return engine.Literal{}, err
	}
	naf := false
	if t.kind == tokIdent && t.text == "not" {
		u, err := p.peek(1)
		if err != nil {
			return engine.Literal{}, err
		}
		if u.kind == tokIdent || u.kind == tokTilde {
			p.take()
			naf = true
		}
	}
	a, err := p.atom(false)
	if err != nil {
		return engine.Literal{}, err
	}
	return engine.Literal{Atom: a.atom, NAF: naf}, nil
}

// parsedAtom is an atom with the position of its first variable, if any, so that a fact
// that is not ground can be refused where the variable is.
type parsedAtom struct {
	atom     engine.Atom
	firstVar *Pos
}

// atom reads ["~"] name "(" [arg {"," arg}] ")". Aggregates are allowed only in heads.
func (p *parser) atom(head bool) (parsedAtom, error) {
	t, err := p.peek(0)
	if err != nil {
		return parsedAtom{}, err
	}
	neg := false
	if t.kind == tokTilde {
		p.take()
		neg = true
	}
	name, err := p.expect(tokIdent, "a predicate name such as done(...)", "")
	if err != nil {
		return parsedAtom{}, err
	}
	if err := checkName(name, "predicate"); err != nil {
		return parsedAtom{}, err
	}
	if !p.is(tokLParen) {
		_, err := p.expect(tokLParen, `"(" after `+name.text, `arguments are named, as in `+name.text+`(id: 1)`)
		return parsedAtom{}, err
	}
	p.take()
	var out parsedAtom
	var args []engine.Arg
	for {
		t, err := p.peek(0)
		if err != nil {
			return parsedAtom{}, err
		}
		if t.kind == tokRParen {
			p.take()
			break
		}
		if len(args) > 0 {
			if t.kind != tokComma {
				return parsedAtom{}, syntaxError(t.pos, `expected ")" to close %s( (found %s)`, name.text, t.describe())
			}
			p.take()
		}
		if !p.is(tokIdent) {
			_, err := p.expect(tokIdent, "an argument name of "+name.text, "arguments are named, as in "+name.text+"(id: 1)")
			return parsedAtom{}, err
		}
		an := p.take()
		if err := checkName(an, "argument"); err != nil {
			return parsedAtom{}, err
		}
		for _, a := range args {
			if a.Name == an.text {
				return parsedAtom{}, syntaxError(an.pos, "%s names the argument %s twice; give each argument once", name.text, an.text)
			}
		}
		if !p.is(tokColon) {
			_, err := p.expect(tokColon, `":" after the argument name `+an.text, "arguments are written name: value")
			return parsedAtom{}, err
		}
		p.take()
		term, tp, err := p.term(an.text, head)
		if err != nil {
			return parsedAtom{}, err
		}
		if term.IsVar() && out.firstVar == nil {
			out.firstVar = &tp
		}
		args = append(args, engine.Arg{Name: an.text, Term: term})
	}
	a, err := engine.NewAtom(name.text, neg, args...)
	if err != nil {
		return parsedAtom{}, syntaxError(name.pos, "%s", teachingOf(err))
	}
	out.atom = a
	return out, nil
}

// term reads a variable, a constant or, in a head, an aggregate fn(Var).
func (p *parser) term(arg string, head bool) (engine.Term, Pos, error) {
	t, err := p.peek(0)
	if err != nil {
		return engine.Term{}, Pos{}, err
	}
	switch t.kind {
	case tokVar:
		p.take()
		v, err := varName(t)
		return engine.V(v), t.pos, err
	case tokString:
		p.take()
		return engine.C(engine.String(t.text)), t.pos, nil
	case tokInt:
		p.take()
		i, err := strconv.ParseInt(t.text, 10, 64)
		if err == nil {
			var v engine.Value
			if v, err = engine.Int(i); err == nil {
				return engine.C(v), t.pos, nil
			}
		}
		return engine.Term{}, t.pos, contract.Errorf(contract.CodeIntegerRange,
			"%s: the integer %s is outside ±(2^53−1); write large numbers as strings", t.pos, t.text)
	case tokFloat:
		p.take()
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(f, 0) {
			return engine.Term{}, t.pos, syntaxError(t.pos, "the number %s is too large for a float; write it as a string", t.text)
		}
		v, err := engine.Float(f)
		if err != nil {
			return engine.Term{}, t.pos, syntaxError(t.pos, "%s", teachingOf(err))
		}
		return engine.C(v), t.pos, nil
	case tokIdent:
		if t.text == "true" || t.text == "false" {
			p.take()
			return engine.C(engine.Bool(t.text == "true")), t.pos, nil
		}
		if u, err := p.peek(1); err == nil && u.kind == tokLParen && isAggregate(t.text) {
			if !head {
				return engine.Term{}, t.pos, syntaxError(t.pos, "the aggregate %s(...) is allowed only in a rule head; move it to the head", t.text)
			}
			p.take()
			p.take()
			v, err := p.expect(tokVar, "a variable to aggregate, as in "+t.text+"(X)", "")
			if err != nil {
				return engine.Term{}, Pos{}, err
			}
			name, err := varName(v)
			if err != nil {
				return engine.Term{}, Pos{}, err
			}
			if _, err := p.expect(tokRParen, `")" to close `+t.text+`(`, ""); err != nil {
				return engine.Term{}, Pos{}, err
			}
			return engine.Term{Var: name, Agg: t.text}, t.pos, nil
		}
		return engine.Term{}, t.pos, syntaxError(t.pos, `expected a value for %s: a variable, a "string", a number, true or false, found %s; quote text as "%s"`, arg, t.describe(), t.text)
	}
	return engine.Term{}, t.pos, syntaxError(t.pos, `expected a value for %s: a variable, a "string", a number, true or false, found %s`, arg, t.describe())
}
