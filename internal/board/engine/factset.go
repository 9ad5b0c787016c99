package engine

import "slices"

// factSet finds a table's facts by their values. It is an open-addressing hash table with
// linear probing and backward-shift deletion: one probe sequence answers "is it there" and
// "where does it go", and, unlike a Go map of pointers, it costs one pointer per slot.
type factSet struct {
	slots []*fact // len is zero or a power of two
	n     int
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

// home is the slot a key probes first.
func (s *factSet) home(key uint64) int {
	return int((key * 0x9E3779B97F4A7C15) >> 32 & uint64(len(s.slots)-1))
}

func sameKey(f *fact, key uint64, exact bool, vals []uint32) bool {
	k, _ := factKey(f.vals)
	return k == key && (exact || slices.Equal(f.vals, vals))
}

// get returns the fact with exactly vals, or nil.
func (s *factSet) get(vals []uint32) *fact {
	if s.n == 0 {
		return nil
	}
	key, exact := factKey(vals)
	mask := len(s.slots) - 1
	for i := s.home(key); ; i = (i + 1) & mask {
		f := s.slots[i]
		if f == nil {
			return nil
		}
		if sameKey(f, key, exact, vals) {
			return f
		}
	}
}

// add stores f, whose values are not in the set.
func (s *factSet) add(f *fact) {
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	s.place(f)
	s.n++
}

func (s *factSet) place(f *fact) {
	key, _ := factKey(f.vals)
	mask := len(s.slots) - 1
	i := s.home(key)
	for s.slots[i] != nil {
		i = (i + 1) & mask
	}
	s.slots[i] = f
}

func (s *factSet) grow() {
	old := s.slots
	s.slots = make([]*fact, max(16, 2*len(old)))
	for _, f := range old {
		if f != nil {
			s.place(f)
		}
	}
}

// remove deletes f, shifting later members of its probe run back so that no lookup stops
// early at the hole.
func (s *factSet) remove(f *fact) {
	mask := len(s.slots) - 1
	key, _ := factKey(f.vals)
	i := s.home(key)
	for s.slots[i] != f {
		if s.slots[i] == nil {
			return
		}
		i = (i + 1) & mask
	}
	s.slots[i] = nil
	s.n--
	for j := (i + 1) & mask; s.slots[j] != nil; j = (j + 1) & mask {
		g := s.slots[j]
		k, _ := factKey(g.vals)
		h := s.home(k)
		// g may move to the hole at i when its home is not in the cyclic range (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			s.slots[i], s.slots[j] = g, nil
			i = j
		}
	}
}
