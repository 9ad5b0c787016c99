package identity

import (
	"fmt"
	"testing"
)

// TestOpenedKeys shows an opened Connection key is served only for the id and the exact
// sealed bytes it was opened from: a key sealed anew under the same id is a miss (opened
// again, never served stale), and past the bound the keys are dropped, not kept growing.
func TestOpenedKeys(t *testing.T) {
	var o openedKeys
	sealed := []byte("sealed-a")
	o.put("con_1", sealed, "dkt_con_1.a")
	sealed[0] = 'X' // the caller's bytes are not the entry's
	tests := []struct {
		name   string
		id     string
		sealed string
		want   Token
		hit    bool
	}{
		{"same id and sealed bytes", "con_1", "sealed-a", "dkt_con_1.a", true},
		{"sealed anew under the same id", "con_1", "sealed-b", "", false},
		{"the caller's bytes changed after put", "con_1", "Xealed-a", "", false},
		{"another id with the same bytes", "con_2", "sealed-a", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, hit := o.get(tt.id, []byte(tt.sealed))
			if got != tt.want || hit != tt.hit {
				t.Errorf("get(%s, %q) = %q, %v; want %q, %v", tt.id, tt.sealed, got, hit, tt.want, tt.hit)
			}
		})
	}
	// The hop's lookup by id alone takes the key put last for that id, and no other's.
	o.put("con_1", []byte("sealed-c"), "dkt_con_1.c")
	if got, ok := o.last("con_1"); !ok || got != "dkt_con_1.c" {
		t.Errorf("last(con_1) = %q, %v; want the key put last", got, ok)
	}
	if got, ok := o.last("con_9"); ok {
		t.Errorf("last(con_9) = %q; want none", got)
	}
	for i := range maxOpenedKeys + 1 {
		o.put(fmt.Sprintf("con_%d", i+10), []byte("s"), "k")
	}
	if n := len(o.keys); n > maxOpenedKeys {
		t.Errorf("%d keys kept, want at most %d", n, maxOpenedKeys)
	}
}
