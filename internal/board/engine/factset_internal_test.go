package engine

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestFactSet checks the open-addressing set against a map through random adds, removes
// and lookups over a small key space, so that probe runs collide, wrap and shift.
func TestFactSet(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		var facts factArena
		s := factSet{facts: &facts}
		model := map[string]*fact{}
		width := rapid.IntRange(1, 3).Draw(t, "width") // 3 takes the hashed path
		key := func(vals []uint32) string { return fmt.Sprint(vals) }
		for i := rapid.IntRange(0, 300).Draw(t, "ops"); i > 0; i-- {
			vals := make([]uint32, width)
			for k := range vals {
				vals[k] = uint32(rapid.IntRange(1, 6).Draw(t, "v"))
			}
			got, want := s.get(vals), model[key(vals)]
			if got != want {
				t.Fatalf("get(%v) = %p, want %p", vals, got, want)
			}
			found, slot := s.find(vals)
			if found != want {
				t.Fatalf("find(%v) = %p, want %p", vals, found, want)
			}
			switch {
			case want == nil && rapid.Bool().Draw(t, "add"):
				f := facts.alloc()
				f.vals = vals
				if rapid.Bool().Draw(t, "at") {
					s.addAt(f, slot) // the slot find gave
				} else {
					s.add(f)
				}
				model[key(vals)] = f
			case want != nil && rapid.Bool().Draw(t, "remove"):
				s.remove(want)
				delete(model, key(vals))
			}
			if s.n != len(model) {
				t.Fatalf("n = %d, want %d", s.n, len(model))
			}
		}
		for k, f := range model {
			if s.get(f.vals) != f {
				t.Fatalf("lost %s", k)
			}
		}
	})
}
