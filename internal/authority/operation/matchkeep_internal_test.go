package operation

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestQueryKey shows that two QueryBoards whose matches may differ never share a key
// under which their matches are kept: they differ in the predicate, an argument's name,
// value or kind, the negation, the Case or the limit, also where one string's end could
// be read as another's start. A pattern with an empty Value (which the Board refuses)
// has no key, so its matches are never kept.
func TestQueryKey(t *testing.T) {
	one, err := contract.IntValue(1)
	if err != nil {
		t.Fatal(err)
	}
	oneF, err := contract.FloatValue(1)
	if err != nil {
		t.Fatal(err)
	}
	atom := func(pred string, args contract.Args) contract.Atom { return contract.Atom{Predicate: pred, Args: args} }
	type query struct {
		pattern contract.Atom
		caseID  contract.CaseID
		limit   int
	}
	base := query{atom("item", contract.Args{"n": contract.StringValue("1")}), "", 50}
	tests := []struct {
		name string
		q    query
	}{
		{"another predicate", query{atom("items", base.pattern.Args), "", 50}},
		{"another argument name", query{atom("item", contract.Args{"m": contract.StringValue("1")}), "", 50}},
		{"another value", query{atom("item", contract.Args{"n": contract.StringValue("2")}), "", 50}},
		{"an integer for a string", query{atom("item", contract.Args{"n": one}), "", 50}},
		{"a float for an integer", query{atom("item", contract.Args{"n": oneF}), "", 50}},
		{"a variable", query{atom("item", contract.Args{"n": contract.StringValue("?n")}), "", 50}},
		{"another argument", query{atom("item", contract.Args{"n": contract.StringValue("1"), "m": contract.StringValue("1")}), "", 50}},
		{"negated", query{contract.Atom{Predicate: "item", Args: base.pattern.Args, Negated: true}, "", 50}},
		{"in a Case", query{base.pattern, "case_1", 50}},
		{"another limit", query{base.pattern, "", 5}},
		// Pairs that one string's end read as the next one's start would confuse.
		{"a value holding a kind", query{atom("item", contract.Args{"n": contract.StringValue("x\x01y")}), "", 50}},
		{"a name holding a kind", query{atom("item", contract.Args{"n\x01x": contract.StringValue("y")}), "", 50}},
		{"a Case", query{base.pattern, "case_", 50}},
		{"a Case ending in the limit", query{base.pattern, "case_5", 0}},
	}
	key := func(q query) string { return queryKey(q.pattern, q.caseID, q.limit) }
	if key(base) == "" || key(base) != key(query{atom("item", contract.Args{"n": contract.StringValue("1")}), "", 50}) {
		t.Fatalf("two equal QueryBoards have keys %q and %q, want one", key(base), key(base))
	}
	seen := map[string]string{key(base): "the base"}
	for _, tt := range tests {
		k := key(tt.q)
		if k == "" {
			t.Errorf("%s: no key, want one", tt.name)
		}
		if other, ok := seen[k]; ok {
			t.Errorf("%s: the key %q of %s, want another", tt.name, k, other)
		}
		seen[k] = tt.name
	}
	if k := key(query{atom("item", contract.Args{"n": {}}), "", 50}); k != "" {
		t.Errorf("a pattern with an empty value has the key %q, want none", k)
	}
}
