package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
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
	for i := len(h.agents); i < agents; i++ {
		at, err := h.a.Directory().CreateAgent(ctx, h.admin, "default", contract.CreateAgentRequest{Name: fmt.Sprintf("bench%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		c, err := h.a.Directory().Authenticate(ctx, identity.Token(at.Token))
		if err != nil {
			b.Fatal(err)
		}
		h.agents = append(h.agents, c)
	}
	for range workers {
		w := h.startWorkerWith(b, "--parallel", "2", "--log-level", "info")
		w.waitLine(b, "lease acquired")
	}
	held := authority.NewOperations(h.a, operation.Config{HoldBound: time.Minute, MaxWritesPerMinute: 1 << 30})
	args := contract.Args{"n": contract.StringValue("1")}
	var mu sync.Mutex
	var lat []time.Duration
	next := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for _, ag := range h.agents {
		wg.Go(func() {
			var last int64
			for range next {
				start := time.Now()
				delivered := last
				ans, err := held.Call(ctx, ag, operation.Call{Tool: contract.ToolApplyAction,
					Input:     &contract.ApplyActionInput{Action: "block", Params: args},
					Delivered: func(o int64) bool { return o == delivered }})
				if err == nil && (len(ans.Result.Operations) == 0 || ans.Result.Operations[0].State != contract.OpDone) {
					err = fmt.Errorf("block = %s %+v, want done", ans.Result.ErrorCode, ans.Result.Operations)
				}
				if err != nil {
					errs <- err
					return
				}
				last = ans.Meta.Ordinal
				mu.Lock()
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}
		})
	}
	elapsed := feedActions(b, next, errs, &wg)
	reportLatencies(b, lat, elapsed)
	b.ReportMetric(0, "ns/op")
}
