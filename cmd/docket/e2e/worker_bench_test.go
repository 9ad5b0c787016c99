package e2e

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
	"github.com/docketrun/docket/internal/worker"
)

// BenchmarkWorker_EndToEnd measures executed Actions through one real docket worker
// process, on SQLite and, when DOCKET_TEST_POSTGRES names a server, on a fresh PostgreSQL
// database: agents apply an Action whose Tool reads a tiny JSON file through the
// workspace adapter (the nearest to a no-op), each call held until its Operation settles.
// It reports actions/s and the p50/p99 latency of ApplyAction → settled; what one action
// costs the store, the worker's claims, reports and lease renewals included (store
// calls, reads of a log's head and transactions per action, counted beneath the
// authority); the CPU per action of this process (cpu-ms/action: the authority, its
// store and the Agents) and of the worker process (worker-cpu-ms/action), and of this
// process's collector (gc-cpu-ms/action, the runtime's estimate); each process's peak
// resident set (peak-rss-mb, worker-peak-rss-mb); and, in the same run, the store's raw
// commit rate (one event per transaction) for comparison.
//
// It also reports how much of the machine the two processes used while the actions ran:
// busy-cores is the CPU time of both processes' threads over the wall time (2 means both
// cores of the benchmark machine were busy), runnable-cores that plus the time their
// threads waited in a run queue for a CPU (/proc/<pid>/task/*/schedstat): runnable-cores
// well above busy-cores means the processes waited for CPU (other work on the machine),
// busy-cores well below the cores with runnable-cores near it means they waited on each
// other, and the cores sat idle.
//
// To see what bounds the rate, DOCKET_BENCH_AGENTS sets the number of Agents (16) and
// DOCKET_BENCH_WORKER_FLAGS adds flags to the docket worker's command line (for
// example "--parallel 16"); the figures in benchmarks/README.md are with neither set.
// The authority runs in the benchmark's own process, so -test.cpuprofile,
// -test.mutexprofile, -test.blockprofile and -test.trace see it (not the worker).
func BenchmarkWorker_EndToEnd(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "docket.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		benchEndToEnd(b, st)
	})
	b.Run("postgres", func(b *testing.B) {
		st, err := postgres.Open(b.Context(), pgTestDB(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		benchEndToEnd(b, st)
	})
}

func benchEndToEnd(b *testing.B, raw store.Store) {
	agents := 16
	if v := os.Getenv("DOCKET_BENCH_AGENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("DOCKET_BENCH_AGENTS=%q: want a count of Agents, 1 or more", v)
		}
		agents = n
	}
	st := storecount.Wrap(raw)
	// Each Agent writes far more often than docket serve lets one in a minute
	// (--max-writes-per-minute, docs/security.md "Bounds"): the bound is lifted here. The
	// Agents call the one Operations the worker's hop serves, as in docket serve.
	held := operation.Config{HoldBound: time.Minute, MaxWritesPerMinute: 1 << 30}
	h := newHopEnvOn(b, st, held, map[string]string{"capability.toml": hopCapability}, "files", []string{"loaded", "blocked"}, nil)
	h.lock(b, "laptop", worker.WorkspaceTool(worker.OpReadJSON))
	ctx := context.Background()
	h.addAgents(b, agents)
	w := h.startWorkerWith(b, strings.Fields(os.Getenv("DOCKET_BENCH_WORKER_FLAGS"))...)
	w.waitLine(b, "lease acquired")
	args := contract.Args{"path": contract.StringValue("data/input.json")}

	st.Reset()
	cpu, workerCPU, gc := cpuTime(b), procCPU(b, w.cmd.Process.Pid), gcCPU()
	sched0 := schedOf(b, os.Getpid()).add(schedOf(b, w.cmd.Process.Pid))
	lat, elapsed := runActions(b, len(h.agents), heldApply(ctx, h.ops, h.agents, "load", args))
	sched := schedOf(b, os.Getpid()).add(schedOf(b, w.cmd.Process.Pid)).sub(sched0)
	b.ReportMetric(float64(sched.run)/float64(elapsed), "busy-cores")
	b.ReportMetric(float64(sched.run+sched.wait)/float64(elapsed), "runnable-cores")
	reportLatencies(b, lat, elapsed)
	reportStoreCounts(b, st.Counts(), len(lat))
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/1000/float64(len(lat)), "cpu-ms/action")
	b.ReportMetric(float64((procCPU(b, w.cmd.Process.Pid)-workerCPU).Microseconds())/1000/float64(len(lat)), "worker-cpu-ms/action")
	b.ReportMetric(float64((gcCPU()-gc).Microseconds())/1000/float64(len(lat)), "gc-cpu-ms/action")
	// Each process's peak resident set, setup included: what a change of the
	// collector's pace or of what the authority keeps costs in memory.
	b.ReportMetric(procPeakRSS(b, os.Getpid()), "peak-rss-mb")
	b.ReportMetric(procPeakRSS(b, w.cmd.Process.Pid), "worker-peak-rss-mb")
	b.ReportMetric(commitRate(b, raw), "store-commits/s")
	b.ReportMetric(0, "ns/op")
}

// runActions runs act once per b.Loop iteration, spread over n goroutines (one per Agent,
// act(i) being the i-th one's action), and returns each action's latency and how long
// they all took, the timer stopped. An error from act fails the benchmark.
func runActions(b *testing.B, n int, act func(i int) error) ([]time.Duration, time.Duration) {
	var mu sync.Mutex
	var lat []time.Duration
	next := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for range next {
				start := time.Now()
				if err := act(i); err != nil {
					errs <- err
					return
				}
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
	return lat, elapsed
}

// heldApply returns the action of the i-th of agents for [runActions]: apply action with
// args through held, as a runtime does (each call names the ordinal of the answer it was
// delivered last), and want it done.
func heldApply(ctx context.Context, held *authority.Operations, agents []identity.Caller, action string, args contract.Args) func(i int) error {
	last := make([]int64, len(agents)) // each written only by its own goroutine
	return func(i int) error {
		delivered := last[i]
		ans, err := held.Call(ctx, agents[i], operation.Call{Tool: contract.ToolApplyAction,
			Input:     &contract.ApplyActionInput{Action: action, Params: args},
			Delivered: func(o int64) bool { return o == delivered }})
		if err == nil && (len(ans.Result.Operations) == 0 || ans.Result.Operations[0].State != contract.OpDone) {
			err = fmt.Errorf("%s = %s %+v, want done", action, ans.Result.ErrorCode, ans.Result.Operations)
		}
		if err != nil {
			return err
		}
		last[i] = ans.Meta.Ordinal
		return nil
	}
}

// reportLatencies reports the rate and the p50 and p99 of n actions' latencies.
func reportLatencies(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "actions/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// cpuTime returns the CPU time this process (the authority, its store and the Agents;
// not the worker process) used so far: on a machine shared with other builds, CPU per
// action moves far less than wall time does.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU returns the CPU time the process pid (the docket worker) used so far, user and
// system, all its threads: fields 14 and 15 of /proc/<pid>/stat (proc(5)), in clock ticks.
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read the CPU time of process %d: %v", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: the fields
	// counted from 3 follow its closing parenthesis.
	_, rest, ok := strings.Cut(string(raw), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		b.Fatalf("/proc/%d/stat is not as proc(5) says: %q", pid, raw)
	}
	var ticks int64
	for _, s := range f[11:13] { // utime and stime: fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: utime or stime %q: %v", pid, s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// gcCPU returns the CPU time this process's collector used so far, as the runtime
// estimates it (/cpu/classes/gc/total:cpu-seconds, runtime/metrics).
func gcCPU() time.Duration {
	sample := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(sample)
	return time.Duration(sample[0].Value.Float64() * float64(time.Second))
}

// procPeakRSS returns the peak resident set of the process pid in MiB: VmHWM of
// /proc/<pid>/status (proc(5)), in kB.
func procPeakRSS(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("read the memory of process %d: %v", pid, err)
	}
	for line := range strings.Lines(string(raw)) {
		v, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/status: VmHWM %q: %v", pid, v, err)
		}
		return float64(kb) / 1024
	}
	b.Fatalf("/proc/%d/status has no VmHWM line", pid)
	return 0
}

// sched is what a process's threads spent on a CPU and waiting in a run queue for one,
// summed over its threads (/proc/<pid>/task/*/schedstat, the kernel's sched-stats.rst).
type sched struct{ run, wait time.Duration }

func (s sched) add(o sched) sched { return sched{s.run + o.run, s.wait + o.wait} }
func (s sched) sub(o sched) sched { return sched{s.run - o.run, s.wait - o.wait} }

// schedOf returns the sched of process pid's threads now.
func schedOf(b *testing.B, pid int) sched {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		b.Fatal(err)
	}
	var s sched
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(raw))
		if len(f) < 2 {
			b.Fatalf("%s is not as sched-stats.rst says: %q", t, raw)
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			b.Fatalf("%s: %v", t, err)
		}
		s = s.add(sched{time.Duration(run), time.Duration(wait)})
	}
	return s
}

// userHZ is the clock tick of /proc's CPU times (USER_HZ, sysconf(_SC_CLK_TCK)): 100 on
// every Linux architecture Go builds docket for.
const userHZ = 100

// reportStoreCounts reports what actions governed actions cost the store, per action,
// and logs the methods called most (where the calls go).
func reportStoreCounts(b *testing.B, c storecount.Counts, actions int) {
	n := float64(actions)
	b.ReportMetric(float64(c.Calls)/n, "store-calls/action")
	b.ReportMetric(float64(c.HeadReads)/n, "head-reads/action")
	b.ReportMetric(float64(c.Txs)/n, "tx/action")
	if c.Txs > 0 {
		// One head read per transaction (benchmarks/README.md) counts the reads a
		// transaction makes, on average and at most; a Poll reads its head outside one.
		b.ReportMetric(float64(c.TxHeadReads)/float64(c.Txs), "head-reads/tx")
		b.ReportMetric(float64(c.TxHeadReadsMax), "max-head-reads/tx")
	}
	var top []string
	for _, m := range c.Top(16) {
		top = append(top, fmt.Sprintf("%s %.2f", m, float64(c.ByMethod[m])/n))
	}
	b.Logf("store calls per action: %s", strings.Join(top, ", "))
	top = top[:0]
	for from, k := range c.HeadsFrom {
		top = append(top, fmt.Sprintf("%s %.2f", from, float64(k)/n))
	}
	slices.Sort(top)
	b.Logf("head reads per action:\n\t%s", strings.Join(top, "\n\t"))
}

// commitRate measures the store's raw rate of one-event transactions for a second, on a
// log of its own: on the project's, each commit would wake the worker's poll and the
// authority's held calls, which would catch up by reading what the memory of the
// authority's commits never saw.
func commitRate(b testing.TB, st store.Store) float64 {
	ctx := context.Background()
	n, start := 0, time.Now()
	for time.Since(start) < time.Second {
		err := st.Update(ctx, func(tx store.Tx) error {
			_, err := tx.Append(ctx, store.NewEvent{Project: "bench-commits", Type: "bench.commit", At: time.Now().UTC(), Actor: "system", Data: []byte(`{}`)})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds()
}

// pgTestDB creates a fresh database on the server DOCKET_TEST_POSTGRES names, dropped
// when tb ends, and returns its DSN; unset, tb skips.
func pgTestDB(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("DOCKET_TEST_POSTGRES")
	if dsn == "" {
		tb.Skip("DOCKET_TEST_POSTGRES is not set: set it to a postgres:// URL whose user may create databases")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("DOCKET_TEST_POSTGRES: %v", err)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect to DOCKET_TEST_POSTGRES: %v", err)
	}
	defer admin.Close(ctx)
	name := "docket_bench_" + strings.ToLower(rand.Text())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		admin, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("connect to drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
