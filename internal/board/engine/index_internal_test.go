package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIndex_Lazy checks that an index that catches up on lookup answers as a scan of the
// table would, through random inserts, removals and lookups.
func TestIndex_Lazy(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var facts factArena
	tab := &table{names: []string{"a", "b"}, facts: &facts, byKey: factSet{facts: &facts}}
	var live []*fact
	for step := range 20_000 {
		switch op := rng.IntN(10); {
		case op < 5:
			vals := []uint32{1 + rng.Uint32N(20), 1 + rng.Uint32N(20)}
			if tab.get(vals) != nil {
				continue
			}
			f := facts.alloc()
			f.vals = vals
			tab.insert(f)
			live = append(live, f)
		case op < 8 && len(live) > 0:
			i := rng.IntN(len(live))
			tab.remove(live[i])
			live = slices.Delete(live, i, i+1)
		default:
			col := rng.IntN(2)
			v := 1 + rng.Uint32N(20)
			var got, want []*fact
			for _, r := range tab.lookup(1<<col, []int{col}, []uint32{v}) {
				if f := facts.at(r); f.vals[col] == v {
					got = append(got, f)
				}
			}
			for _, f := range live {
				if f.vals[col] == v {
					want = append(want, f)
				}
			}
			byPtr := func(a, b *fact) int { return slices.Compare(a.vals, b.vals) }
			slices.SortFunc(got, byPtr)
			slices.SortFunc(want, byPtr)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: lookup column %d = %d found %d facts, want %d", step, col, v, len(got), len(want))
			}
		}
		for i, r := range tab.list {
			if f := facts.at(r); int(f.pos) != i {
				t.Fatalf("step %d: fact at %d has pos %d", step, i, f.pos)
			}
		}
	}
}
