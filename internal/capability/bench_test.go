package capability_test

import (
	"testing"

	"github.com/docketrun/docket/internal/capability"
)

// BenchmarkCheck validates the reference capability from memory: decoding, rule parsing,
// engine checks and the digest.
func BenchmarkCheck(b *testing.B) {
	raw := map[string][]byte{}
	for name, body := range exampleFiles(b) {
		raw[name] = []byte(body)
	}
	for b.Loop() {
		if _, err := capability.Check(raw); err != nil {
			b.Fatal(err)
		}
	}
}
