// Package bytememo remembers values by the exact bytes they were made from, for work
// that is a function of those bytes alone (a strict decode, a canonical digest): the
// value remembered is the one the work gives again.
package bytememo

import "sync"

// Memo holds at most a bound of values, by their bytes; past the bound it starts again,
// so that the memo of a long run stays small without keeping an order of use. It is
// safe for concurrent use.
type Memo[V any] struct {
	max int

	mu    sync.Mutex
	byKey map[string]V
}

// New returns an empty Memo of at most max values.
func New[V any](max int) *Memo[V] {
	return &Memo[V]{max: max, byKey: map[string]V{}}
}

// Get returns the value remembered for key, if any.
func (m *Memo[V]) Get(key []byte) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.byKey[string(key)]
	return v, ok
}

// Put remembers v for key, forgetting every value first when the memo is full.
func (m *Memo[V]) Put(key []byte, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.byKey) >= m.max {
		clear(m.byKey)
	}
	m.byKey[string(key)] = v
}

// Len returns how many values the memo holds.
func (m *Memo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byKey)
}
