package gateway_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// TestGateway_QueryArgsEachCall shows that a session's QueryBoard is answered for the
// arguments each call sends: asked the same again, and then another pattern, the matches
// follow the arguments, and arguments that do not decode are refused after ones that did.
func TestGateway_QueryArgsEachCall(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	if res, _ := call(t, cs, "ApplyBatch", batchOf("seen", "heard")); !res.Accepted {
		t.Fatalf("ApplyBatch = %+v, want accepted", res)
	}
	matches := func(predicate string) int {
		t.Helper()
		q, _ := call(t, cs, "QueryBoard", contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: predicate, Args: contract.Args{"x": str("?x")}}})
		var m struct {
			Matches contract.Bounded[contract.Node] `json:"matches"`
		}
		if err := json.Unmarshal(q.Result, &m); err != nil {
			t.Fatalf("QueryBoard %s result = %s: %v", predicate, q.Result, err)
		}
		return len(m.Matches.Items)
	}
	steps := []struct {
		predicate string
		want      int
	}{{"seen", 1}, {"seen", 1}, {"nothing", 0}, {"seen", 1}}
	for i, s := range steps {
		if got := matches(s.predicate); got != s.want {
			t.Errorf("call %d, pattern %s: %d matches, want %d", i, s.predicate, got, s.want)
		}
	}
	if res, _ := call(t, cs, "QueryBoard", map[string]any{"pattern": 7}); res.ErrorCode != contract.CodeInvalidArgument {
		t.Errorf("QueryBoard with a pattern that is no object = %s %q, want invalid_argument", res.ErrorCode, res.Teaching)
	}
}
