package gateway

import "testing"

// TestApart: f runs to its end before apart returns, and a panic in f reaches apart's
// caller, not the process.
func TestApart(t *testing.T) {
	ran := false
	apart(func() { ran = true })
	if !ran {
		t.Fatal("apart returned before f ran")
	}
	defer func() {
		if got := recover(); got != "boom" {
			t.Fatalf("recovered %v from apart, want f's panic \"boom\"", got)
		}
	}()
	apart(func() { panic("boom") })
	t.Fatal("apart returned after f panicked")
}
