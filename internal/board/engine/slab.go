package engine

import "slices"

// factSlab hands out facts carved from shared chunks, so that deriving n facts costs
// n/maxChunk allocations instead of n: per-fact allocation, and the GC work it brings,
// was a third of the time of a large fixpoint. A chunk lives while any of its facts is
// referenced, so chunks are capped to bound what a dropped fact can keep alive; they grow
// from small so that a small Board wastes little.
type factSlab struct {
	free []fact // the unused rest of the current chunk
	next int    // the size of the next chunk
}

const (
	minChunk = 8
	maxChunk = 256
)

// alloc returns a zeroed fact.
func (s *factSlab) alloc() *fact {
	if len(s.free) == 0 {
		s.next = min(max(2*s.next, minChunk), maxChunk)
		s.free = make([]fact, s.next)
	}
	f := &s.free[0]
	s.free = s.free[1:]
	return f
}

// appendFact appends f to s, doubling a full slice. append grows large slices by about a
// quarter, which for the lists a large fixpoint fills (a mutation's new facts) allocates
// about five times the final size; doubling allocates about twice. It is for lists that
// die with the mutation: a long-lived one would keep the slack.
func appendFact(s []*fact, f *fact) []*fact {
	if len(s) == cap(s) && len(s) >= 256 {
		s = slices.Grow(s, len(s))
	}
	return append(s, f)
}

// premSlab hands out premise lists carved from shared chunks, for the same reason as
// factSlab: a rule with three positive literals would otherwise allocate once per derived
// fact. A list is never written after it is handed out, and its capacity is its length, so
// an append to it copies instead of writing into its neighbour.
type premSlab struct {
	free []*fact
}

// premChunk is the size of a chunk; a longer list is allocated on its own.
const premChunk = 1024

// compact returns the n non-nil members of prem, in order.
func (s *premSlab) compact(prem []*fact, n int) []*fact {
	var out []*fact
	switch {
	case n == 0:
		return nil
	case n > premChunk/8:
		out = make([]*fact, 0, n)
	default:
		if len(s.free) < n {
			s.free = make([]*fact, premChunk)
		}
		out = s.free[:0:n]
		s.free = s.free[n:]
	}
	for _, p := range prem {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}
