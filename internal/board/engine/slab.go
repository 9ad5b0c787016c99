package engine

import "slices"

// fref addresses a fact in its engine's factArena; 0 is no fact. Tables, the fact sets,
// the indexes, a mutation's lists and premises hold facts by fref rather than by pointer:
// arrays of 32-bit indexes hold no pointers, so the collector does not scan them. In the
// closure of a 1,000-chain four lists (a table's, its fact set's, the mutation's list of
// created facts and the frontier) and the premises each pointed at all 500,500 facts, and
// collection was over a third of the time.
type fref uint32

// factArena hands out facts from fixed chunks, addressed by fref: deriving n facts costs
// n/arenaChunk allocations instead of n. A fact that stops being stored goes on the free
// list and its slot is handed out again after its mutation ends, so a Board that churns does
// not grow. Chunks are never freed: an engine keeps the slots of the most facts it held.
type factArena struct {
	chunks []*[arenaChunk]fact
	next   fref   // the first slot never handed out
	free   []fref // slots of dropped facts, to reuse
}

const (
	arenaShift = 8
	arenaChunk = 1 << arenaShift // 256 facts of 160 bytes: a chunk of 40 KiB
	arenaMask  = arenaChunk - 1
)

// at returns the fact r addresses.
func (a *factArena) at(r fref) *fact { return &a.chunks[r>>arenaShift][r&arenaMask] }

// alloc returns a zeroed fact that knows its fref.
func (a *factArena) alloc() *fact {
	if n := len(a.free); n > 0 {
		// release zeroed it.
		r := a.free[n-1]
		a.free = a.free[:n-1]
		return a.at(r)
	}
	if a.next == 0 {
		a.next = 1 // fref 0 is no fact
	}
	r := a.next
	a.next++
	if int(r>>arenaShift) == len(a.chunks) {
		a.chunks = append(a.chunks, new([arenaChunk]fact))
	}
	// A slot never handed out is zero, as new made it.
	f := a.at(r)
	f.ref, f.pos = r, -1
	return f
}

// release puts f's slot on the free list. Nothing may refer to f afterwards: it is called
// for facts that left storage when their mutation ended.
func (a *factArena) release(f *fact) {
	r := f.ref
	*f = fact{ref: r, pos: -1, gen: f.gen + 1}
	a.free = append(a.free, r)
}

// appendRef appends r to s, doubling a full slice. append grows large slices by about a
// quarter, which for the lists a large fixpoint fills (a mutation's new facts) allocates
// about five times the final size; doubling allocates about twice. It is for lists that
// die with the mutation: a long-lived one would keep the slack.
func appendRef(s []fref, r fref) []fref {
	if len(s) == cap(s) && len(s) >= 256 {
		s = slices.Grow(s, len(s))
	}
	return append(s, r)
}

// premSlab hands out premise lists carved from shared chunks, so that a rule with three
// positive literals does not allocate once per derived fact. A list is never written after
// it is handed out, and its capacity is its length, so an append to it copies instead of
// writing into its neighbour.
type premSlab struct {
	free []fref
}

// premChunk is the size of a chunk; a longer list is allocated on its own.
const premChunk = 1024

// compact returns the refs of the n non-nil members of prem, in order.
func (s *premSlab) compact(prem []*fact, n int) []fref {
	var out []fref
	switch {
	case n == 0:
		return nil
	case n > premChunk/8:
		out = make([]fref, 0, n)
	default:
		if len(s.free) < n {
			s.free = make([]fref, premChunk)
		}
		out = s.free[:0:n]
		s.free = s.free[n:]
	}
	for _, p := range prem {
		if p != nil {
			out = append(out, p.ref)
		}
	}
	return out
}
