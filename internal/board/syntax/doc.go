// Package syntax reads and writes the Board's rule text: facts, rules, atoms and patterns
// in the syntax docs/capabilities.md describes, and facts as JSON lines.
//
// # Text
//
// A file is a sequence of statements, each ending in '.':
//
//	edge(from: 1, to: 2).                        # a fact: a ground atom
//	~edge(from: 2, to: 1).                       # a strongly negated fact
//	path(from: X, to: Y) :- edge(from: X, to: Y).
//	@reach path(from: X, to: Z) :- edge(from: X, to: Y), path(from: Y, to: Z).
//	lonely(node: N) :- node(id: N), not edge(from: N, to: _).
//	n(order: O, total: sum(A)) :- line(order: O, amount: A).
//
// Arguments are always named (name: term). Predicate and argument names are lower-case
// letters, digits and '_', starting with a letter. A variable starts with a capital letter
// or '_' (X, Total, _seen), or is written ?name, the JSON wire form (?job_id); both spell
// the same variable, and the printer uses ?name for any variable that does not start with a
// capital letter or '_'. A lone '_' is an anonymous variable: each occurrence is a fresh
// variable, named _1, _2, … in the statement's canonical order (head arguments, then body
// literals, each atom's arguments sorted by name), so names of the form _<digits> are
// reserved. Values are double-quoted strings with Go escapes (valid UTF-8), integers within
// ±(2^53−1) (outside it: integer_range), floats (with a '.' or an exponent), true and false.
// "not p(...)" is negation-as-failure, "~p(...)" strong negation, and "#" starts a comment
// that runs to the end of the line. A head argument may aggregate a body variable with
// count, sum, min or max.
//
// # Rule ids
//
// A rule may be named with "@id" before it (id: letters, digits and _ . : / # -). A rule
// without one gets [DefaultRuleID]: its head predicate, '#', and the first 12 hex digits of
// the sha256 of its printed text. The id depends only on the rule's content, not on where it
// sits, so it survives edits elsewhere in the file, reads the same on every machine, and
// lets the printer leave it out; two identical rules in one file are refused.
//
// # JSON
//
// [ParseJSONFacts] reads facts as JSON lines, one object a line:
// {"predicate": "edge", "args": {"from": 1, "to": 2}, "negated": false, "tier": "attested"}
// ("negated" and "tier" optional; unknown fields refused). A number with '.' or an exponent
// is a float, any other number an integer. [ParseJSONPattern] reads one such object as a
// pattern, where a string "?name" is a variable and "?_" an anonymous one, and
// [MarshalJSONPattern] writes it back.
//
// # Errors
//
// Every refusal is a *contract.Error with code rule_syntax (or integer_range) whose
// teaching starts with file:line:col (1-based; the column counts bytes) and says what was
// expected, e.g. `rules.dl:2:14: expected ")" to close done(`. [Parse] returns the first
// error; [ParseAll] skips each broken statement and reports up to [MaxErrors].
package syntax
