package bytememo

import (
	"fmt"
	"testing"
)

// TestMemo checks that a value is found by equal bytes (not the same slice), that other
// bytes find none, and that the memo stays within its bound, starting again past it.
func TestMemo(t *testing.T) {
	t.Parallel()
	m := New[int](3)
	key := []byte("a\x00b")
	m.Put(key, 1)
	key[0] = 'z' // the memo keeps its own copy of the key
	for _, step := range []struct {
		key  string
		want int
		ok   bool
	}{
		{"a\x00b", 1, true},
		{"z\x00b", 0, false},
		{"a\x00", 0, false},
		{"", 0, false},
	} {
		if got, ok := m.Get([]byte(step.key)); got != step.want || ok != step.ok {
			t.Errorf("Get(%q) = %d, %v, want %d, %v", step.key, got, ok, step.want, step.ok)
		}
	}
	for i := range 10 {
		m.Put(fmt.Appendf(nil, "k%d", i), i)
		if n := m.Len(); n > 3 {
			t.Fatalf("after %d more values the memo holds %d, want at most 3", i+1, n)
		}
	}
	if got, ok := m.Get([]byte("k9")); !ok || got != 9 {
		t.Errorf("Get of the value put last = %d, %v, want 9, true", got, ok)
	}
	if _, ok := m.Get([]byte("a\x00b")); ok {
		t.Error("the first value is still remembered after the memo started again")
	}
}
