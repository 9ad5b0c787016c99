package tables

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestMintID_SortsAsTheLog checks what the id index's pages rely on: minted ids sort as
// the seqs they were minted at, across every power of 32 where a base-32 digit carries
// over, are 26 characters of [rand.Text]'s alphabet, and differ when minted at one seq
// twice (two instances linking at the same head).
func TestMintID_SortsAsTheLog(t *testing.T) {
	var seqs []int64
	for v := int64(1); v > 0 && v < math.MaxInt64/32; v *= 32 {
		seqs = append(seqs, v-1, v, v+1)
	}
	seqs = append(seqs, math.MaxInt64)
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	ids := make([]string, len(seqs))
	for i, s := range seqs {
		ids[i] = mintID(s)
		if len(ids[i]) != 26 || strings.Trim(ids[i], idAlphabet) != "" {
			t.Fatalf("mintID(%d) = %q, want 26 characters of %q", s, ids[i], idAlphabet)
		}
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			t.Errorf("mintID(%d) = %q sorts at or after mintID(%d) = %q", seqs[i-1], ids[i-1], seqs[i], ids[i])
		}
	}
	if a, b := mintID(7), mintID(7); a == b {
		t.Errorf("mintID(7) twice = %q both times, want the random half to differ", a)
	}
}
