package syntax_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/contract"
)

// pathEngine is a real engine at the fixpoint of a small program: two edges, the path
// rule, and a strong negation written as a fact.
func pathEngine(t *testing.T) *engine.Engine {
	t.Helper()
	src := `edge(from: 1, to: 2).
edge(from: 2, to: 3).
~path(from: 3, to: 1).
path(from: X, to: Y) :- edge(from: X, to: Y).
path(from: X, to: Z) :- path(from: X, to: Y), edge(from: Y, to: Z).
`
	stmts, err := syntax.Parse("path.dl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Limits{})
	var facts []engine.Fact
	for _, st := range stmts {
		switch {
		case st.Rule != nil:
			r := *st.Rule
			r.Tier = contract.TierVerified
			if _, err := eng.AddRules(r); err != nil {
				t.Fatal(err)
			}
		case st.Fact != nil:
			facts = append(facts, engine.Fact{ID: st.Pos.String(), Atom: *st.Fact, Tier: contract.TierAsserted})
		}
	}
	if _, err := eng.Assert(facts...); err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestWriteFacts: every fact a line, predicate by predicate (p before ~p), each with its
// tier and whether it was derived; --only keeps the relations it names.
func TestWriteFacts(t *testing.T) {
	t.Parallel()
	eng := pathEngine(t)
	tests := []struct {
		name   string
		only   []string
		asJSON bool
		want   string
	}{
		{name: "every fact", want: `asserted  base    edge(from: 1, to: 2)
asserted  base    edge(from: 2, to: 3)
asserted  derived path(from: 1, to: 2)
asserted  derived path(from: 1, to: 3)
asserted  derived path(from: 2, to: 3)
asserted  base    ~path(from: 3, to: 1)
`},
		{name: "only the strong negation", only: []string{"~path"}, want: "asserted  base    ~path(from: 3, to: 1)\n"},
		{name: "as JSON", only: []string{"~path", "edge"}, asJSON: true,
			want: `{"predicate":"edge","args":{"from":1,"to":2},"tier":"asserted","derived":false}
{"predicate":"edge","args":{"from":2,"to":3},"tier":"asserted","derived":false}
{"predicate":"path","args":{"from":3,"to":1},"negated":true,"tier":"asserted","derived":false}
`},
		{name: "a predicate that holds nothing", only: []string{"nowhere"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := syntax.WriteFacts(&b, eng, syntax.Only(tt.only), tt.asJSON); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("WriteFacts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteCounts: one line a predicate; a predicate --only names is written even when
// it holds nothing.
func TestWriteCounts(t *testing.T) {
	t.Parallel()
	eng := pathEngine(t)
	tests := []struct {
		name   string
		only   []string
		asJSON bool
		want   string
	}{
		{name: "every predicate", want: "edge 2\npath 3\n~path 1\n"},
		{name: "only some, one empty", only: []string{"~path", "nowhere"}, want: "nowhere 0\n~path 1\n"},
		{name: "as JSON", only: []string{"edge"}, asJSON: true, want: `{"predicate":"edge","facts":2}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := syntax.WriteCounts(&b, eng, tt.only, tt.asJSON); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("WriteCounts (-want +got):\n%s", diff)
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWrite_ReturnsWriteErrors: a failed write ends the printing with its error.
func TestWrite_ReturnsWriteErrors(t *testing.T) {
	t.Parallel()
	eng := pathEngine(t)
	if err := syntax.WriteFacts(failWriter{}, eng, nil, false); err == nil {
		t.Error("WriteFacts to a failing writer returned nil")
	}
	if err := syntax.WriteCounts(failWriter{}, eng, nil, true); err == nil {
		t.Error("WriteCounts to a failing writer returned nil")
	}
}
