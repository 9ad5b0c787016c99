package gateway_test

import (
	"runtime"
	"testing"
	"time"
)

// TestGateway_DeliveredNotCopied: what a call costs does not grow with the outcomes its
// session was given before. The session's record of them grows by one an answer, and
// was copied whole for every call (≈ 40 KB a call after 3,000 writes:
// benchmarks/README.md, "ApplyBatch's answer").
func TestGateway_DeliveredNotCopied(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	perCall := func() uint64 {
		const calls = 10
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range calls {
			call(t, cs, "QueryBoard", struct{}{})
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / calls
	}
	perCall() // warm
	fresh := perCall()
	f.gw.MarkDelivered(100_000)
	if long := perCall(); long > fresh+200_000 {
		t.Errorf("a call allocates %d bytes after 100,000 outcomes were given, %d before; want no more than the same", long, fresh)
	}
}
