package engine_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/floor"
)

// reportHeap reports the live heap while e is still reachable, and the heap obtained from
// the OS (which never shrinks in a run, so it bounds the peak), in MB.
func reportHeap(b *testing.B, e *engine.Engine) {
	b.Helper()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MB")
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MB")
	runtime.KeepAlive(e)
}

// peakHeap runs f after a collection and returns the most heap its objects (live, or dead
// and not yet swept) took meanwhile, in MB, sampled every half millisecond.
func peakHeap(f func()) float64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return float64(peak) / (1 << 20)
}

// BenchmarkTransitiveClosureChain1000 derives path over the chain 0→1→…→1000: 500,500
// derived facts, through the left-linear rule path(X,Z) :- edge(X,Y), path(Y,Z). The
// no-deltas variant runs the engine as the Board and `docket rules eval` do, ignoring the
// Delta; the deltas variant also builds the 500,500 entries of the Delta.
func BenchmarkTransitiveClosureChain1000(b *testing.B) {
	const n = 1000
	var edges []engine.Fact
	for i := 0; i < n; i++ {
		edges = append(edges, fact(fmt.Sprintf("e%d", i), verified, at("edge", "from", i, "to", i+1)))
	}
	benchFixpoint(b, edges, pathRules(verified))
}

// benchFixpoint asserts facts into a fresh engine and adds rules, with and without deltas.
func benchFixpoint(b *testing.B, facts []engine.Fact, rules []engine.Rule) {
	for _, deltas := range []bool{false, true} {
		name := "no-deltas"
		if deltas {
			name = "deltas"
		}
		build := func(b *testing.B) *engine.Engine {
			e := engine.New(engine.Limits{})
			e.SetDeltas(deltas)
			if _, err := e.Assert(facts...); err != nil {
				b.Fatal(err)
			}
			d, err := e.AddRules(rules...)
			if err != nil {
				b.Fatal(err)
			}
			if deltas && len(d.Added) != e.Len()-len(facts) {
				b.Fatalf("the delta has %d added facts, the engine %d derived", len(d.Added), e.Len()-len(facts))
			}
			return e
		}
		b.Run(name, func(b *testing.B) {
			var e *engine.Engine
			derived := 0
			for b.Loop() {
				e = build(b)
				derived += e.Len() - len(facts)
			}
			b.ReportMetric(float64(derived)/b.Elapsed().Seconds(), "derived-facts/s")
			b.ReportMetric(float64(e.Len()-len(facts)), "derived-facts")
			reportHeap(b, e)
			e = nil
			b.ReportMetric(peakHeap(func() { runtime.KeepAlive(build(b)) }), "peak-heap-MB")
		})
	}
}

// BenchmarkTransitiveClosureFloor runs the datalog floor's closure of the same chain, when
// the floors are checked out beside this repository, so that the engine's ratio to it is
// measured in the same run: -bench 'TransitiveClosure' -count 5.
func BenchmarkTransitiveClosureFloor(b *testing.B) {
	bin := floor.Binary(b, "datalog-floor")
	var ms []float64
	for b.Loop() {
		ms = append(ms, floor.MedianMS(b, bin, "-tc", "1000", "-runs", "1"))
	}
	b.ReportMetric(floor.Median(ms), "floor-ms")
}

// BenchmarkSameGeneration50k is a join-heavy program: same generation over a forest of
// 4,167 trees (a root, 3 children, 9 grandchildren), 50,004 parent facts, 375,030 derived.
func BenchmarkSameGeneration50k(b *testing.B) {
	var facts []engine.Fact
	node := 0
	add := func(child, parent int) {
		facts = append(facts, fact(fmt.Sprintf("p%d", len(facts)), verified, at("parent", "child", child, "parent", parent)))
	}
	for len(facts) < 50_000 {
		root := node
		node++
		for c := 0; c < 3; c++ {
			child := node
			node++
			add(child, root)
			for g := 0; g < 3; g++ {
				add(node, child)
				node++
			}
		}
	}
	rules := []engine.Rule{
		rule("sg1", verified, at("sg", "a", "X", "b", "Y"), pos(at("parent", "child", "X", "parent", "P")), pos(at("parent", "child", "Y", "parent", "P"))),
		rule("sg2", verified, at("sg", "a", "X", "b", "Y"), pos(at("parent", "child", "X", "parent", "P")), pos(at("sg", "a", "P", "b", "Q")), pos(at("parent", "child", "Y", "parent", "Q"))),
	}
	benchFixpoint(b, facts, rules)
}

// orderBoard builds a board of 100,000 base facts (customers, orders, lines, skus,
// blocks, a management tree) and 20 rules with joins, NAF, strong negation, arithmetic,
// aggregates and recursion.
func orderBoard(b *testing.B) (*engine.Engine, *rand.Rand) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var fs []engine.Fact
	addf := func(a engine.Atom) { fs = append(fs, fact(fmt.Sprintf("b%d", len(fs)), verified, a)) }
	for c := 0; c < 10_000; c++ {
		addf(at("customer", "id", c, "region", c%20))
	}
	for o := 0; o < 30_000; o++ {
		status := "open"
		if o%3 == 0 {
			status = "closed"
		}
		addf(at("order", "id", o, "customer", rng.IntN(10_000), "status", status))
	}
	for l := 0; l < 46_890; l++ {
		addf(at("line", "order", rng.IntN(30_000), "sku", rng.IntN(1000), "qty", 1+rng.IntN(5), "price", 100+rng.IntN(2000)))
	}
	for k := 0; k < 1000; k++ {
		addf(at("sku", "id", k, "category", k%15))
	}
	for c := 0; c < 10_000; c += 10 {
		addf(at("blocked", "customer", c))
	}
	// a management tree: 1 + 10 + 100 + 1000 + 10000 employees, 11,110 manager facts
	emp := 1
	level := []int{0}
	for d := 0; d < 4; d++ {
		var next []int
		for _, boss := range level {
			for k := 0; k < 10; k++ {
				addf(at("manager", "emp", emp, "boss", boss))
				next = append(next, emp)
				emp++
			}
		}
		level = next
	}
	rules := []engine.Rule{
		rule("r01", verified, at("line_total", "order", "O", "sku", "K", "total", "T"), pos(at("line", "order", "O", "sku", "K", "qty", "Q", "price", "P")), pos(at("mul", "left", "Q", "right", "P", "result", "T"))),
		rule("r02", verified, at("order_total", "order", "O", "total", "sum(T)"), pos(at("line_total", "order", "O", "sku", "K", "total", "T"))),
		rule("r03", verified, at("order_lines", "order", "O", "n", "count(K)"), pos(at("line", "order", "O", "sku", "K"))),
		rule("r04", verified, at("big_order", "order", "O"), pos(at("order_total", "order", "O", "total", "T")), pos(at("gt", "left", "T", "right", 5000))),
		rule("r05", verified, at("customer_order", "customer", "C", "order", "O"), pos(at("order", "id", "O", "customer", "C"))),
		rule("r06", verified, at("open_order", "order", "O"), pos(at("order", "id", "O", "status", "open"))),
		rule("r07", verified, at("ok_customer", "customer", "C"), pos(at("customer", "id", "C")), not(at("blocked", "customer", "C"))),
		rule("r08", verified, at("shippable", "order", "O"), pos(at("open_order", "order", "O")), pos(at("order", "id", "O", "customer", "C")), pos(at("ok_customer", "customer", "C"))),
		rule("r09", verified, at("vip", "customer", "C"), pos(at("customer_order", "customer", "C", "order", "O")), pos(at("big_order", "order", "O"))),
		rule("r10", verified, at("regional_vip", "region", "R", "customer", "C"), pos(at("vip", "customer", "C")), pos(at("customer", "id", "C", "region", "R"))),
		rule("r11", verified, at("category_sale", "order", "O", "category", "G"), pos(at("line", "order", "O", "sku", "K")), pos(at("sku", "id", "K", "category", "G"))),
		rule("r12", verified, at("mixed_order", "order", "O"), pos(at("category_sale", "order", "O", "category", "G1")), pos(at("category_sale", "order", "O", "category", "G2")), pos(at("neq", "left", "G1", "right", "G2"))),
		rule("r13", verified, at("reports_to", "emp", "E", "boss", "B"), pos(at("manager", "emp", "E", "boss", "B"))),
		rule("r14", verified, at("reports_to", "emp", "E", "boss", "B"), pos(at("manager", "emp", "E", "boss", "M")), pos(at("reports_to", "emp", "M", "boss", "B"))),
		rule("r15", verified, at("team_size", "boss", "B", "n", "count(E)"), pos(at("manager", "emp", "E", "boss", "B"))),
		rule("r16", verified, at("held_order", "order", "O"), pos(at("order", "id", "O", "customer", "C")), pos(at("blocked", "customer", "C"))),
		rule("r17", verified, at("~shippable", "order", "O"), pos(at("held_order", "order", "O"))),
		rule("r18", verified, at("priority", "order", "O"), pos(at("shippable", "order", "O")), pos(at("big_order", "order", "O"))),
		rule("r19", verified, at("region_orders", "region", "R", "n", "count(O)"), pos(at("customer", "id", "C", "region", "R")), pos(at("order", "id", "O", "customer", "C"))),
		rule("r20", verified, at("discount", "order", "O", "amount", "D"), pos(at("priority", "order", "O")), pos(at("order_total", "order", "O", "total", "T")), pos(at("idiv", "left", "T", "right", 10, "result", "D"))),
	}
	e := engine.New(engine.Limits{})
	if _, err := e.AddRules(rules...); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Assert(fs...); err != nil {
		b.Fatal(err)
	}
	return e, rng
}

// reportMedian reports the median of per-operation durations, in µs.
func reportMedian(b *testing.B, ds []time.Duration) {
	b.Helper()
	slices.Sort(ds)
	if len(ds) > 0 {
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "median-µs")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
	}
}

// randomBaseFact draws a fact of the kinds the board holds, to assert.
func randomBaseFact(rng *rand.Rand, id string) engine.Fact {
	switch rng.IntN(4) {
	case 0:
		return fact(id, verified, at("order", "id", 30_000+rng.IntN(1_000_000), "customer", rng.IntN(10_000), "status", "open"))
	case 1:
		return fact(id, verified, at("blocked", "customer", rng.IntN(10_000)))
	case 2:
		return fact(id, verified, at("manager", "emp", 20_000+rng.IntN(1_000_000), "boss", 1000+rng.IntN(10_000)))
	}
	return fact(id, verified, at("line", "order", rng.IntN(30_000), "sku", rng.IntN(1000), "qty", 1+rng.IntN(5), "price", 100+rng.IntN(2000)))
}

func BenchmarkAssertOne(b *testing.B) {
	e, rng := orderBoard(b)
	b.ReportMetric(float64(e.Len()), "board-facts")
	var ds []time.Duration
	i := 0
	for b.Loop() {
		i++
		f := randomBaseFact(rng, fmt.Sprintf("new%d", i))
		start := time.Now()
		if _, err := e.Assert(f); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	reportMedian(b, ds)
}

func BenchmarkRetractOne(b *testing.B) {
	e, rng := orderBoard(b)
	b.ReportMetric(float64(e.Len()), "board-facts")
	var ds []time.Duration
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("b%d", rng.IntN(100_000))
		en, ok := e.Lookup(id)
		if !ok {
			continue
		}
		start := time.Now()
		if _, err := e.Retract(id); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
		// Put it back under a new id so the board keeps its size.
		b.StopTimer()
		if _, err := e.Assert(fact(fmt.Sprintf("re%d", i), en.Tier, en.Atom)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	reportMedian(b, ds)
}
