package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
)

// BenchmarkBounder_Bound cuts a 1 MiB multibyte result to the default 16 KiB view.
func BenchmarkBounder_Bound(b *testing.B) {
	result := []byte(strings.Repeat("calculation_result €", 1<<20/22))
	bd := agent.Bounder{Sink: sinkFunc(func(context.Context, agent.Artifact) (string, error) { return "art-1", nil })}
	b.SetBytes(int64(len(result)))
	for b.Loop() {
		if _, err := bd.Bound(context.Background(), "QueryBoard", "c", result); err != nil {
			b.Fatal(err)
		}
	}
}
