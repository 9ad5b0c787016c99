package engine

import (
	"math/bits"
	"slices"
)

// factSet finds a table's facts by their values. It is an open-addressing hash table with
// linear probing and backward-shift deletion: one probe sequence answers "is it there" and
// "where does it go". The keys of the facts sit in an array of their own, beside the facts:
// a probe reads 8-byte keys (eight to a cache line) and no fact but the one it finds, and a
// probe for a new fact, which a fixpoint makes for nearly every derivation, reads the keys
// alone, half the memory that key and fact side by side took.
type factSet struct {
	keys  []uint64 // len is zero or a power of two; emptyKey marks an empty slot
	facts []*fact  // aligned with keys
	n     int
	shift uint8 // 64 - log2(len(keys)); see home
}

// emptyKey marks an empty slot. No fact has it as its key: see factKey.
const emptyKey = 0

// factKey keys a fact's values: exact for one or two values (value ids are never 0, so
// neither is the key), a hash otherwise, never emptyKey. A table's facts all have as many
// values, so a table of facts without values holds one fact and keys it 1.
func factKey(vals []uint32) (key uint64, exact bool) {
	switch len(vals) {
	case 0:
		return 1, false
	case 1:
		return uint64(vals[0]), true
	case 2:
		return uint64(vals[0])<<32 | uint64(vals[1]), true
	}
	if h := hashVals(vals); h != emptyKey {
		return h, false
	}
	return 1, false
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
	if s.n == 0 {
		return nil
	}
	key, exact := factKey(vals)
	mask := len(s.keys) - 1
	for i := s.home(key); ; i = (i + 1) & mask {
		k := s.keys[i]
		if k == emptyKey {
			return nil
		}
		if k == key && (exact || slices.Equal(s.facts[i].values(), vals)) {
			return s.facts[i]
		}
	}
}

// add stores f, whose values are not in the set.
func (s *factSet) add(f *fact) {
	if 4*(s.n+1) > 3*len(s.keys) {
		s.grow()
	}
	key, _ := factKey(f.values())
	s.place(key, f)
	s.n++
}

func (s *factSet) place(key uint64, f *fact) {
	mask := len(s.keys) - 1
	i := s.home(key)
	for s.keys[i] != emptyKey {
		i = (i + 1) & mask
	}
	s.keys[i], s.facts[i] = key, f
}

func (s *factSet) grow() {
	oldKeys, oldFacts := s.keys, s.facts
	n := max(16, 2*len(oldKeys))
	s.keys, s.facts = make([]uint64, n), make([]*fact, n)
	s.shift = uint8(64 - bits.TrailingZeros(uint(n)))
	for i, k := range oldKeys {
		if k != emptyKey {
			s.place(k, oldFacts[i])
		}
	}
}

// remove deletes f, shifting later members of its probe run back so that no lookup stops
// early at the hole.
func (s *factSet) remove(f *fact) {
	if s.n == 0 {
		return
	}
	mask := len(s.keys) - 1
	key, _ := factKey(f.values())
	i := s.home(key)
	for s.facts[i] != f {
		if s.keys[i] == emptyKey {
			return
		}
		i = (i + 1) & mask
	}
	s.keys[i], s.facts[i] = emptyKey, nil
	s.n--
	for j := (i + 1) & mask; s.keys[j] != emptyKey; j = (j + 1) & mask {
		h := s.home(s.keys[j])
		// The member at j may move to the hole at i when its home is not in the cyclic
		// range (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			s.keys[i], s.facts[i] = s.keys[j], s.facts[j]
			s.keys[j], s.facts[j] = emptyKey, nil
			i = j
		}
	}
}
