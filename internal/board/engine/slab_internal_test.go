package engine

import (
	"slices"
	"testing"
)

// TestPremSlab checks that premise lists carved from one chunk do not overlap: appending
// to one must not change its neighbour.
func TestPremSlab(t *testing.T) {
	var s premSlab
	f1, f2, f3 := &fact{ref: 1}, &fact{ref: 2}, &fact{ref: 3}
	a := s.compact([]*fact{f1, nil, f2}, 2)
	b := s.compact([]*fact{nil, f3}, 1)
	_ = append(a, f3.ref)
	if !slices.Equal(a, []fref{1, 2}) || !slices.Equal(b, []fref{3}) {
		t.Fatalf("lists changed: a = %v, b = %v", a, b)
	}
	if got := s.compact([]*fact{nil}, 0); got != nil {
		t.Fatalf("an empty list = %v, want nil", got)
	}
}
