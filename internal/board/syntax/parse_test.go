package syntax_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata cases")

// separator divides a testdata case's input from its expected output.
const separator = "\n----\n"

// valueCmp compares engine Values, whose fields are unexported, by ==.
var valueCmp = cmp.Comparer(func(a, b engine.Value) bool { return a == b })

// readCase splits a testdata file into its input and expected output.
func readCase(t *testing.T, path string) (input, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in, out, ok := strings.Cut(string(b), separator)
	if !ok {
		t.Fatalf("%s: no %q line between input and expected output", path, strings.TrimSpace(separator))
	}
	return in, out
}

// dump renders what ParseAll returned in a form the testdata files can hold: one line per
// statement with its position, kind and (for rules) id, then one line per error with its
// code.
func dump(stmts []syntax.Statement, errs []error) string {
	var b strings.Builder
	for _, s := range stmts {
		if s.Fact != nil {
			fmt.Fprintf(&b, "%s fact %s\n", s.Pos, syntax.FormatAtom(*s.Fact))
			continue
		}
		fmt.Fprintf(&b, "%s rule %s %s\n", s.Pos, s.Rule.ID, strings.ReplaceAll(syntax.FormatRule(*s.Rule), "\n", "\n\t"))
	}
	for _, err := range errs {
		fmt.Fprintf(&b, "error %s\n", err)
	}
	return b.String()
}

// TestParse runs every case in testdata/parse: the input is parsed as rules.dl with
// ParseAll and the result dumped. Parse must fail with ParseAll's first error, and a case
// that parses must survive Print and Parse unchanged.
func TestParse(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/parse/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata cases: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			in, want := readCase(t, path)
			stmts, errs := syntax.ParseAll("rules.dl", []byte(in))
			for _, err := range errs {
				if contract.CodeOf(err) == "" {
					t.Fatalf("ParseAll error %v has no code", err)
				}
			}
			got := dump(stmts, errs)
			if *update {
				if err := os.WriteFile(path, []byte(in+separator+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse(%s) mismatch (-want +got):\n%s", path, diff)
			}
			first, err := syntax.Parse("rules.dl", []byte(in))
			switch {
			case len(errs) > 0 && (err == nil || err.Error() != errs[0].Error()):
				t.Errorf("Parse error = %v, want ParseAll's first error %v", err, errs[0])
			case len(errs) == 0 && err != nil:
				t.Errorf("Parse error = %v, want none as from ParseAll", err)
			case len(errs) == 0:
				assertRoundTrip(t, first)
			}
		})
	}
}

// assertRoundTrip checks that printing stmts and parsing the text again gives them back.
func assertRoundTrip(t *testing.T, stmts []syntax.Statement) {
	t.Helper()
	text := syntax.Print(stmts)
	again, err := syntax.Parse("printed.dl", text)
	if err != nil {
		t.Fatalf("Parse(Print(x)) error: %v\nprinted:\n%s", err, text)
	}
	ignorePos := cmp.FilterPath(func(p cmp.Path) bool { s := p.Last().String(); return s == ".Pos" || s == ".BodyPos" }, cmp.Ignore())
	if diff := cmp.Diff(stmts, again, valueCmp, ignorePos); diff != "" {
		t.Fatalf("Parse(Print(x)) != x (-x +again):\n%s\nprinted:\n%s", diff, text)
	}
}

func TestParseAtom(t *testing.T) {
	t.Parallel()
	x := engine.V
	str := func(s string) engine.Term { return engine.C(engine.String(s)) }
	tests := []struct {
		name string
		src  string
		want engine.Atom
		code contract.Code
	}{
		{name: "wire variable", src: `calculation_input(job_id: ?j)`, want: mustAtom(t, "calculation_input", false, engine.Arg{Name: "job_id", Term: x("j")})},
		{name: "capital variable and final dot", src: `~done(id: X, by: "me").`, want: mustAtom(t, "done", true, engine.Arg{Name: "id", Term: x("X")}, engine.Arg{Name: "by", Term: str("me")})},
		{name: "anonymous numbered by sorted argument", src: `p(b: _, a: _)`, want: mustAtom(t, "p", false, engine.Arg{Name: "a", Term: x("_1")}, engine.Arg{Name: "b", Term: x("_2")})},
		{name: "trailing text", src: `p(a: 1) q`, code: contract.CodeRuleSyntax},
		{name: "aggregate outside a head", src: `p(a: sum(X))`, code: contract.CodeRuleSyntax},
		{name: "negation as failure is not an atom", src: `not p(a: 1)`, code: contract.CodeRuleSyntax},
		{name: "integer too large", src: `p(a: 9007199254740992)`, code: contract.CodeIntegerRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := syntax.ParseAtom("pattern", tt.src)
			if tt.code != "" {
				if contract.CodeOf(err) != tt.code {
					t.Fatalf("ParseAtom(%q) error = %v, want code %s", tt.src, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAtom(%q) error: %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, got, valueCmp); diff != "" {
				t.Errorf("ParseAtom(%q) mismatch (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestParseLiterals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string // the literals formatted and joined by " & ", or "error <code>"
	}{
		{name: "one atom", src: `p(a: 1)`, want: `p(a: 1)`},
		{name: "conjunction with negation", src: `p(a: X), not q(a: X), ~r(b: X).`, want: `p(a: X) & not q(a: X) & ~r(b: X)`},
		{name: "predicate named not", src: `not(a: 1)`, want: `not(a: 1)`},
		{name: "negation of a predicate named not", src: `not not(a: 1)`, want: `not not(a: 1)`},
		{name: "anonymous across literals", src: `p(a: _), q(a: _)`, want: `p(a: _) & q(a: _)`},
		{name: "missing comma", src: `p(a: 1) q(a: 2)`, want: `error rule_syntax`},
		{name: "empty", src: ``, want: `error rule_syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lits, err := syntax.ParseLiterals("query", tt.src)
			var got string
			if err != nil {
				got = "error " + string(contract.CodeOf(err))
			} else {
				var parts []string
				for _, l := range lits {
					parts = append(parts, syntax.FormatLiteral(l))
				}
				got = strings.Join(parts, " & ")
			}
			if got != tt.want {
				t.Errorf("ParseLiterals(%q) = %s (err %v), want %s", tt.src, got, err, tt.want)
			}
		})
	}
}

func TestParseLiterals_AnonymousAreDistinct(t *testing.T) {
	t.Parallel()
	lits, err := syntax.ParseLiterals("query", `p(a: _), q(a: _)`)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := lits[0].Atom.Get("a")
	b, _ := lits[1].Atom.Get("a")
	if a.Var == "" || a.Var == b.Var {
		t.Errorf("anonymous variables = %q and %q, want two distinct variables", a.Var, b.Var)
	}
}

func mustAtom(t *testing.T, pred string, neg bool, args ...engine.Arg) engine.Atom {
	t.Helper()
	a, err := engine.NewAtom(pred, neg, args...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// FuzzParse checks that Parse and ParseAll never panic or hang, that every refusal carries
// a code, and that whatever parses survives Print and Parse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/parse/*.txt")
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		in, _, _ := bytes.Cut(b, []byte(separator))
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, errs := syntax.ParseAll("fuzz.dl", src)
		if len(errs) > syntax.MaxErrors {
			t.Fatalf("ParseAll(%q) gave %d errors, more than MaxErrors", src, len(errs))
		}
		for _, err := range errs {
			if contract.CodeOf(err) == "" {
				t.Fatalf("ParseAll(%q) error %v has no code", src, err)
			}
		}
		stmts, err := syntax.Parse("fuzz.dl", src)
		if (err != nil) != (len(errs) > 0) {
			t.Fatalf("Parse(%q) error = %v, but ParseAll gave %d errors", src, err, len(errs))
		}
		if err != nil {
			return
		}
		assertRoundTrip(t, stmts)
	})
}
