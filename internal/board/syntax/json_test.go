package syntax_test

import (
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

func TestParseJSONFacts(t *testing.T) {
	t.Parallel()
	i := func(n int64) engine.Term {
		v, err := engine.Int(n)
		if err != nil {
			t.Fatal(err)
		}
		return engine.C(v)
	}
	f := func(x float64) engine.Term {
		v, err := engine.Float(x)
		if err != nil {
			t.Fatal(err)
		}
		return engine.C(v)
	}
	tests := []struct {
		name string
		src  string
		want []engine.Fact
		code contract.Code
	}{
		{
			name: "facts with tiers and a blank line",
			src: `{"predicate": "calculation_input", "args": {"job_id": "calc-001", "quantity": 2, "price": 1.5}, "tier": "attested"}

{"predicate": "edge", "args": {"ok": true}, "negated": true}`,
			want: []engine.Fact{
				{ID: "facts.jsonl:1", Tier: contract.TierAttested, Atom: mustAtom(t, "calculation_input", false,
					engine.Arg{Name: "job_id", Term: engine.C(engine.String("calc-001"))},
					engine.Arg{Name: "quantity", Term: i(2)},
					engine.Arg{Name: "price", Term: f(1.5)})},
				{ID: "facts.jsonl:3", Tier: contract.TierAsserted, Atom: mustAtom(t, "edge", true,
					engine.Arg{Name: "ok", Term: engine.C(engine.Bool(true))})},
			},
		},
		{name: "float with exponent stays a float", src: `{"predicate": "p", "args": {"x": 1e2}}`,
			want: []engine.Fact{{ID: "facts.jsonl:1", Tier: contract.TierAsserted, Atom: mustAtom(t, "p", false, engine.Arg{Name: "x", Term: f(100)})}}},
		{name: "unknown field", src: `{"predicate": "p", "args": {}, "derived": true}`, code: contract.CodeRuleSyntax},
		{name: "variable in a fact", src: `{"predicate": "p", "args": {"x": "?x"}}`, code: contract.CodeRuleSyntax},
		{name: "integer out of range", src: `{"predicate": "p", "args": {"x": 9007199254740992}}`, code: contract.CodeIntegerRange},
		{name: "null value", src: `{"predicate": "p", "args": {"x": null}}`, code: contract.CodeRuleSyntax},
		{name: "nested value", src: `{"predicate": "p", "args": {"x": [1]}}`, code: contract.CodeRuleSyntax},
		{name: "unknown tier", src: `{"predicate": "p", "args": {}, "tier": "gold"}`, code: contract.CodeRuleSyntax},
		{name: "bad predicate", src: `{"predicate": "P", "args": {}}`, code: contract.CodeRuleSyntax},
		{name: "missing predicate", src: `{"args": {}}`, code: contract.CodeRuleSyntax},
		{name: "two objects on a line", src: `{"predicate": "p", "args": {}} {"predicate": "q", "args": {}}`, code: contract.CodeRuleSyntax},
		{name: "not json", src: `p(a: 1).`, code: contract.CodeRuleSyntax},
		{name: "duplicate member", src: `{"predicate": "p", "predicate": "q", "args": {}}`, code: contract.CodeRuleSyntax},
		{name: "duplicate argument", src: `{"predicate": "p", "args": {"x": 1, "x": 2}}`, code: contract.CodeRuleSyntax},
		{name: "case-variant member", src: `{"Predicate": "p", "args": {}}`, code: contract.CodeRuleSyntax},
		{name: "invalid UTF-8", src: "{\"predicate\": \"p\", \"args\": {\"x\": \"a\xffb\"}}", code: contract.CodeRuleSyntax},
		{name: "lone high surrogate", src: `{"predicate": "p", "args": {"x": "\ud800"}}`, code: contract.CodeRuleSyntax},
		{name: "lone low surrogate", src: `{"predicate": "p", "args": {"x": "\udc00"}}`, code: contract.CodeRuleSyntax},
		{name: "high surrogate then a letter", src: `{"predicate": "p", "args": {"x": "\ud800\u0041"}}`, code: contract.CodeRuleSyntax},
		{name: "raw control character", src: "{\"predicate\": \"p\", \"args\": {\"x\": \"a\tb\"}}", code: contract.CodeRuleSyntax},
		{name: "null negated", src: `{"predicate": "p", "args": {}, "negated": null}`, code: contract.CodeRuleSyntax},
		{name: "leading zero", src: `{"predicate": "p", "args": {"x": 01}}`, code: contract.CodeRuleSyntax},
		{name: "huge integer", src: `{"predicate": "p", "args": {"x": 123456789012345678901234567890}}`, code: contract.CodeIntegerRange},
		{name: "unclosed object", src: `{"predicate": "p", "args": {}`, code: contract.CodeRuleSyntax},
		{name: "surrogate pair and escapes", src: `{"predicate": "p", "args": {"x": "\ud83d\ude00 \"\\\/\n\u00e9"}, "tier": ""}`,
			want: []engine.Fact{{ID: "facts.jsonl:1", Tier: contract.TierAsserted, Atom: mustAtom(t, "p", false,
				engine.Arg{Name: "x", Term: engine.C(engine.String("\U0001F600 \"\\/\n\u00e9"))})}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := syntax.ParseJSONFacts("facts.jsonl", []byte(tt.src))
			if tt.code != "" {
				if contract.CodeOf(err) != tt.code {
					t.Fatalf("ParseJSONFacts(%q) error = %v, want code %s", tt.src, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseJSONFacts(%q) error: %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, got, valueCmp); diff != "" {
				t.Errorf("ParseJSONFacts(%q) mismatch (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

// TestParseJSONFacts_Where checks that a refusal names the file and line.
func TestParseJSONFacts_Where(t *testing.T) {
	t.Parallel()
	src := "{\"predicate\": \"p\", \"args\": {}}\n\n{\"predicate\": \"p\", \"args\": {\"x\": 1, \"x\": 1}}\n"
	_, err := syntax.ParseJSONFacts("facts.jsonl", []byte(src))
	if contract.CodeOf(err) != contract.CodeRuleSyntax || !strings.Contains(err.Error(), "facts.jsonl:3:") {
		t.Fatalf("ParseJSONFacts error = %v, want rule_syntax at facts.jsonl:3", err)
	}
}

func TestParseJSONPattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string // the pattern in rule text, or "error <code>"
	}{
		{name: "wire variables", src: `{"predicate": "calculation_result", "args": {"job_id": "calc-001", "total": "?t"}}`, want: `calculation_result(job_id: "calc-001", total: ?t)`},
		{name: "anonymous", src: `{"predicate": "p", "args": {"a": "?_", "b": "?_"}}`, want: `p(a: _, b: _)`},
		{name: "question mark text is a string", src: `{"predicate": "p", "args": {"q": "why?"}}`, want: `p(q: "why?")`},
		{name: "reserved variable", src: `{"predicate": "p", "args": {"a": "?_2"}}`, want: `error rule_syntax`},
		{name: "tier refused", src: `{"predicate": "p", "args": {}, "tier": "attested"}`, want: `error rule_syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := syntax.ParseJSONPattern("pattern", []byte(tt.src))
			got := syntax.FormatAtom(a)
			if err != nil {
				got = "error " + string(contract.CodeOf(err))
			}
			if got != tt.want {
				t.Errorf("ParseJSONPattern(%q) = %s (err %v), want %s", tt.src, got, err, tt.want)
			}
		})
	}
}

func FuzzParseJSONFacts(f *testing.F) {
	f.Add([]byte(`{"predicate": "p", "args": {"x": 1, "y": "?y", "z": 1.5e3}, "tier": "attested", "negated": true}`))
	f.Add([]byte("{\"predicate\": \"p\", \"args\": {}}\n\n{\"predicate\": \"q\", \"args\": {\"a\": false}}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		facts, err := syntax.ParseJSONFacts("fuzz.jsonl", src)
		if err != nil {
			if contract.CodeOf(err) == "" {
				t.Fatalf("ParseJSONFacts(%q) error %v has no code", src, err)
			}
			return
		}
		for _, fact := range facts {
			if !fact.Atom.Ground() || !fact.Tier.Valid() {
				t.Fatalf("ParseJSONFacts(%q) gave %+v, want a ground fact with a tier", src, fact)
			}
		}
	})
}
