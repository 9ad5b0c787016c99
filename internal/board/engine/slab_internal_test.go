package engine

import (
	"slices"
	"testing"
)

// TestPremSlab checks that premise lists carved from one chunk do not overlap: appending
// to one must not change its neighbour.
func TestPremSlab(t *testing.T) {
	t.Parallel()
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

// TestFactArena checks that facts keep their refs, and that a released slot comes back
// zeroed, with its ref, no table position and its generation counted, before a fresh one
// is used.
func TestFactArena(t *testing.T) {
	t.Parallel()
	var a factArena
	var fs []*fact
	for range 3 * arenaChunk {
		f := a.alloc()
		f.nvals, f.inline[0] = 1, uint32(f.ref)
		fs = append(fs, f)
	}
	for i, f := range fs {
		if f.ref != fref(i+1) || a.at(f.ref) != f || f.inline[0] != uint32(f.ref) {
			t.Fatalf("fact %d: ref %d, at(ref) = %p, want %p", i, f.ref, a.at(f.ref), f)
		}
	}
	old := fs[arenaChunk+5]
	old.id, old.derTier = "d_x", 3
	a.release(old)
	f := a.alloc()
	if f != old || f.ref != fref(arenaChunk+6) || f.gen != 1 || f.pos != -1 || f.id != "" || f.derTier != 0 || f.nvals != 0 {
		t.Fatalf("reused slot = %+v, want slot %d zeroed", *f, arenaChunk+6)
	}
	if g := a.alloc(); g.ref != fref(3*arenaChunk+1) {
		t.Fatalf("next fresh ref = %d, want %d", g.ref, 3*arenaChunk+1)
	}
}
