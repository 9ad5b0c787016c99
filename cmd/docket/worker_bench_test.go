package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/worker"
)

// BenchmarkWorker_EndToEnd measures executed Actions through one real docket worker
// process on SQLite: agents apply an Action whose Tool reads a tiny JSON file through the
// workspace adapter (the nearest to a no-op), each call held until its Operation settles.
// It reports actions/s and the p50/p99 latency of ApplyAction → settled, and, in the
// same run, the store's raw commit rate (one event per transaction) for comparison.
func BenchmarkWorker_EndToEnd(b *testing.B) {
	const agents = 16
	h := newHopEnv(b, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, nil)
	h.lock(b, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
	ctx := context.Background()
	for i := len(h.agents); i < agents; i++ {
		at, err := h.a.CreateAgent(ctx, h.admin, "default", contract.CreateAgentRequest{Name: fmt.Sprintf("bench%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		c, err := h.a.Authenticate(ctx, authority.Token(at.Token))
		if err != nil {
			b.Fatal(err)
		}
		h.agents = append(h.agents, c)
	}
	w := h.startWorker(b)
	w.waitLine(b, "lease acquired")
	held := authority.NewOperations(h.a, authority.OperationsConfig{HoldBound: time.Minute})
	args := contract.Args{"path": contract.StringValue("data/input.json")}

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
				ans, err := held.Call(ctx, ag, authority.Call{Tool: contract.ToolApplyAction,
					Input:     &contract.ApplyActionInput{Action: "load", Params: args},
					Delivered: func(o int64) bool { return o == delivered }})
				if err == nil && (len(ans.Result.Operations) == 0 || ans.Result.Operations[0].State != contract.OpDone) {
					err = fmt.Errorf("load = %s %+v, want done", ans.Result.ErrorCode, ans.Result.Operations)
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
	start := time.Now()
	for b.Loop() {
		select {
		case next <- struct{}{}:
		case err := <-errs:
			b.Fatal(err)
		}
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "actions/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(commitRate(b, h.st), "store-commits/s")
	b.ReportMetric(0, "ns/op")
}

// commitRate measures the store's raw rate of one-event transactions for a second.
func commitRate(b *testing.B, st store.Store) float64 {
	ctx := context.Background()
	n, start := 0, time.Now()
	for time.Since(start) < time.Second {
		err := st.Update(ctx, func(tx store.Tx) error {
			_, err := tx.Append(ctx, store.NewEvent{Project: "default", Type: "bench.commit", At: time.Now().UTC(), Actor: "system", Data: []byte(`{}`)})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds()
}
