package board_test

import (
	"fmt"
	"testing"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// TestBoard_QueryLimit: a query reads past the View's node bound, up to QueryMaxMatches,
// and says when it stopped.
func TestBoard_QueryLimit(t *testing.T) {
	t.Parallel()
	b := newCalcBoard(t)
	var ops []contract.Operation
	for i := range board.QueryMaxMatches + 10 {
		ops = append(ops, assertFact(calcInput(t, fmt.Sprintf("calc-%03d", i))))
	}
	apply(t, b, workspace, ops...)
	pattern := contract.Atom{Predicate: "calculation_input", Args: contract.Args{}}
	tests := []struct {
		name      string
		limit     int
		want      int
		truncated bool
	}{
		{"default", 0, board.QueryMaxMatches, true},
		{"smaller", 5, 5, true},
		{"all fit", board.QueryMaxMatches + 10, board.QueryMaxMatches + 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.Query(pattern, "", tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Items) != tt.want || got.Truncated != tt.truncated {
				t.Errorf("Query(limit %d) = %d items, truncated %v; want %d, %v", tt.limit, len(got.Items), got.Truncated, tt.want, tt.truncated)
			}
		})
	}
	if board.QueryMaxMatches <= board.ViewMaxNodes {
		t.Errorf("QueryMaxMatches %d <= ViewMaxNodes %d: a query could not read past the View", board.QueryMaxMatches, board.ViewMaxNodes)
	}
}
