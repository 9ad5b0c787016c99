package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
)

// FuzzCompactedTurns: the summary header is read back from any text a conversation holds
// (a saved message is outside input to whoever reads it) without a panic, and a header
// the loop writes is read as the turns it names.
func FuzzCompactedTurns(f *testing.F) {
	const digest = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	f.Add(3, 1, "the summary")
	f.Add(0, 0, "")
	f.Add(1<<20, 99999, "[docket: 1 earlier messages (x model turns)")
	f.Fuzz(func(t *testing.T, messages, turns int, rest string) {
		head := fmt.Sprintf("[docket: %d earlier messages (%d model turns) were compacted into this summary; their digest is %s. The Board View is not in it: call QueryBoard to read the Board again.]", messages, turns, digest)
		got, ok := agent.CompactedTurns(head + "\n" + rest)
		if messages >= 0 && turns >= 0 && (!ok || got != turns) {
			t.Errorf("CompactedTurns of a header naming %d turns = %d, %v", turns, got, ok)
		}
		if n, ok := agent.CompactedTurns(rest); ok && (n < 0 || !strings.HasPrefix(rest, "[docket: ")) {
			t.Errorf("CompactedTurns(%q) = %d, true", rest, n)
		}
	})
}
