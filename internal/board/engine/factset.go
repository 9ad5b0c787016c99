package engine

import (
	"math/bits"
	"slices"
)

// factSet finds a table's facts by their values. It is an open-addressing hash table with
// linear probing and backward-shift deletion: one probe sequence answers "is it there" and
// "where does it go". Each slot keeps its fact's key, so a probe reads no fact but the one
// it finds.
type factSet struct {
	facts *factArena // where its members live
	slots []factSlot // len is zero or a power of two
	n     int
	shift uint8 // 64 - log2(len(slots)); see home
}

type factSlot struct {
	key uint64
	f   fref // 0 for an empty slot
}

// factKey keys a fact's values: exact for up to two values, a hash otherwise.
func factKey(vals []uint32) (key uint64, exact bool) {
	switch len(vals) {
	case 0:
		return 0, true
	case 1:
		return uint64(vals[0]), true
	case 2:
		return uint64(vals[0])<<32 | uint64(vals[1]), true
	}
	return hashVals(vals), false
}

// home is the slot a key probes first: the top bits of a multiplicative hash, so that the
// home of a key in a set twice as large is 2h or 2h+1 for its home h in this one. grow
// then walks the old slots in order and writes the new ones nearly in order: rehashing
// half a million keys at random was a tenth of the time of a large fixpoint.
func (s *factSet) home(key uint64) int {
	return int((key * 0x9E3779B97F4A7C15) >> s.shift)
}

// get returns the fact with exactly vals, or nil.
func (s *factSet) get(vals []uint32) *fact {
	f, _ := s.find(vals)
	return f
}

// find returns the fact with exactly vals, or nil and the empty slot that ends vals' probe
// run (−1 when the set has no slots), where addAt may put it: a fixpoint looks up each
// fact it derives and, when it is new, adds it, and a second probe for the add was a
// twentieth of its time.
func (s *factSet) find(vals []uint32) (*fact, int) {
	if len(s.slots) == 0 {
		return nil, -1
	}
	key, exact := factKey(vals)
	mask := len(s.slots) - 1
	for i := s.home(key); ; i = (i + 1) & mask {
		sl := s.slots[i]
		if sl.f == 0 {
			return nil, i
		}
		if sl.key == key {
			if f := s.facts.at(sl.f); exact || slices.Equal(f.values(), vals) {
				return f, i
			}
		}
	}
}

// add stores f, whose values are not in the set.
func (s *factSet) add(f *fact) { s.addAt(f, -1) }

// addAt stores f, whose values are not in the set, at slot, which find returned for them
// with no change to the set since; −1 finds the slot afresh.
func (s *factSet) addAt(f *fact, slot int) {
	key, _ := factKey(f.values())
	if slot < 0 || 4*(s.n+1) > 3*len(s.slots) {
		if 4*(s.n+1) > 3*len(s.slots) {
			s.grow()
		}
		s.place(factSlot{key: key, f: f.ref})
	} else {
		s.slots[slot] = factSlot{key: key, f: f.ref}
	}
	s.n++
}

func (s *factSet) place(sl factSlot) {
	mask := len(s.slots) - 1
	i := s.home(sl.key)
	for s.slots[i].f != 0 {
		i = (i + 1) & mask
	}
	s.slots[i] = sl
}

func (s *factSet) grow() {
	old := s.slots
	n := max(16, 2*len(old))
	s.slots = make([]factSlot, n)
	s.shift = uint8(64 - bits.TrailingZeros(uint(n)))
	for _, sl := range old {
		if sl.f != 0 {
			s.place(sl)
		}
	}
}

// remove deletes f, shifting later members of its probe run back so that no lookup stops
// early at the hole.
func (s *factSet) remove(f *fact) {
	if s.n == 0 {
		return
	}
	mask := len(s.slots) - 1
	key, _ := factKey(f.values())
	i := s.home(key)
	for s.slots[i].f != f.ref {
		if s.slots[i].f == 0 {
			return
		}
		i = (i + 1) & mask
	}
	s.slots[i] = factSlot{}
	s.n--
	for j := (i + 1) & mask; s.slots[j].f != 0; j = (j + 1) & mask {
		h := s.home(s.slots[j].key)
		// The member at j may move to the hole at i when its home is not in the cyclic
		// range (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			s.slots[i], s.slots[j] = s.slots[j], factSlot{}
			i = j
		}
	}
}
