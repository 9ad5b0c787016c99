package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// slowScript is a run Tool's program that takes 50 ms, as a call to a slow system would:
// what a Connection's workers add is room for more such calls at once.
const slowScript = `#!/bin/sh
sleep 0.05
echo '{"n":"1"}'
`

// BenchmarkWorkers_Several measures executed Actions through one Connection served by 1,
// 2 and 3 real docket worker processes (--parallel 2 each) on SQLite: 24 agents apply an
// Action whose run Tool takes 50 ms, each call held until its Operation settles. It
// reports actions/s and the p50/p99 latency of ApplyAction → settled. See
// docs/workers.md (Several workers per Connection) and benchmarks/README.md.
func BenchmarkWorkers_Several(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) { benchSeveral(b, n) })
	}
}

func benchSeveral(b *testing.B, workers int) {
	const agents = 24
	h := newHopEnv(b, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, nil)
	h.lock(b, "laptop", "test.block@1")
	writeFile(b, filepath.Join(filepath.Dir(h.man), "block.sh"), slowScript, 0o755)
	ctx := context.Background()
	h.addAgents(b, agents)
	for range workers {
		w := h.startWorkerWith(b, "--parallel", "2", "--log-level", "info")
		w.waitLine(b, "lease acquired")
	}
	held := authority.NewOperations(h.a, operation.Config{HoldBound: time.Minute, MaxWritesPerMinute: 1 << 30})
	args := contract.Args{"n": contract.StringValue("1")}
	lat, elapsed := runActions(b, len(h.agents), heldApply(ctx, held, h.agents, "block", args))
	reportLatencies(b, lat, elapsed)
	b.ReportMetric(0, "ns/op")
}
