package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store"
)

// BenchData is the event data the append benchmarks write: a small JSON object of the size
// a typical Board or operation event carries (~100 bytes).
var BenchData = []byte(`{"op":"assert_fact","node":"n-000042","predicate":"calculation_input","args":{"job_id":"calc-001","quantity":2}}`)

// RawFunc runs one transaction of the implementation's raw baseline: rows single-row
// INSERTs of event-sized rows into a plain table, with the driver and nothing else.
type RawFunc func(ctx context.Context, rows int) error

// BenchAppend measures [store.Tx.Append] in transactions of perTx events each on s,
// alternating every transaction with one of raw, so that the noise of a shared machine
// falls on both alike. It reports events/s for each and the Append rate as a percentage
// of the raw rate (pct_of_raw): the figure that matters (see benchmarks/README.md).
func BenchAppend(b *testing.B, s store.Store, perTx int, raw RawFunc) {
	b.Helper()
	ctx := context.Background()
	project := fmt.Sprintf("bench-%d", perTx)
	n := 0
	var inAppend, inRaw time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		err := s.Update(ctx, func(tx store.Tx) error {
			for range perTx {
				n++
				_, err := tx.Append(ctx, store.NewEvent{
					Project: project, ID: fmt.Sprintf("e%d", n), Type: "board.asserted",
					At: t0, Actor: "agent:calc", Data: BenchData,
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("Update: %v", err)
		}
		mid := time.Now()
		if err := raw(ctx, perTx); err != nil {
			b.Fatalf("raw insert: %v", err)
		}
		inAppend += mid.Sub(start)
		inRaw += time.Since(mid)
	}
	appendRate := float64(n) / inAppend.Seconds()
	rawRate := float64(n) / inRaw.Seconds()
	b.ReportMetric(appendRate, "events/s")
	b.ReportMetric(rawRate, "raw_events/s")
	b.ReportMetric(100*appendRate/rawRate, "pct_of_raw")
}

// BenchAppendWriters measures [store.Store.Update] of one [store.Tx.Append] each, made by
// writers goroutines at once (each waits for its own commit before its next), against
// raw's single-row transactions one after another: the rate a log reaches when writers
// arrive together (group commit) beside the commit rate of the driver alone. Each round
// appends perRound events from the writers, then runs perRound raw transactions, so the
// noise of a shared machine falls on both alike. It reports events/s, raw_tx/s and
// pct_of_raw.
func BenchAppendWriters(b *testing.B, s store.Store, writers int, raw RawFunc) {
	b.Helper()
	ctx := context.Background()
	const perWriter = 16
	project := fmt.Sprintf("writers-%d", writers)
	var inAppend, inRaw time.Duration
	events := 0
	round := 0
	b.ReportAllocs()
	for b.Loop() {
		round++
		start := time.Now()
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					err := s.Update(ctx, func(tx store.Tx) error {
						_, err := tx.Append(ctx, store.NewEvent{
							Project: project, ID: fmt.Sprintf("r%d-w%d-%d", round, w, i), Type: "board.asserted",
							At: t0, Actor: "agent:calc", Data: BenchData,
						})
						return err
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatalf("Update: %v", err)
		}
		mid := time.Now()
		for range writers * perWriter {
			if err := raw(ctx, 1); err != nil {
				b.Fatalf("raw insert: %v", err)
			}
		}
		inAppend += mid.Sub(start)
		inRaw += time.Since(mid)
		events += writers * perWriter
	}
	appendRate := float64(events) / inAppend.Seconds()
	rawRate := float64(events) / inRaw.Seconds()
	b.ReportMetric(appendRate, "events/s")
	b.ReportMetric(rawRate, "raw_tx/s")
	b.ReportMetric(100*appendRate/rawRate, "pct_of_raw")
}

// BenchPutNodes measures writing a Board change of perTx nodes (each about the size of a
// fact's record) on s: transactions that write them with one [store.Tx.PutNodes]
// alternate with ones that write them with a [store.Tx.PutNode] each, so that the noise
// of a shared machine falls on both alike. It reports the time of a transaction of each
// (putnodes-ns/tx, putnode-ns/tx) and the first as a percentage of the second.
func BenchPutNodes(b *testing.B, s store.Store, perTx int) {
	b.Helper()
	ctx := context.Background()
	if err := s.Update(ctx, func(tx store.Tx) error {
		return tx.CreateProject(ctx, store.Project{ID: "bench", Name: "Bench", CreatedAt: t0})
	}); err != nil {
		b.Fatalf("create project: %v", err)
	}
	n := 0
	nodes := func() []store.Node {
		ns := make([]store.Node, perTx)
		for i := range ns {
			n++
			// Ids minted as the Board mints them, from a digest: each lands on a page
			// of the id index of its own, as a batch's nodes do.
			sum := sha256.Sum256(fmt.Appendf(nil, "%d", n))
			id := "n-" + hex.EncodeToString(sum[:8])
			ns[i] = store.Node{ID: id, Kind: "fact", Data: fmt.Appendf(nil,
				`{"nodeId":%q,"kind":"fact","createdBy":"agent:calc","createdAt":"2026-12-03T10:00:00Z","tier":"asserted","seq":%d,"atom":{"predicate":"item","args":{"n":"%d"}},"holds":true,"note":%q}`,
				id, n, n, strings.Repeat("x", 120))}
		}
		return ns
	}
	var batched, single time.Duration
	b.ReportAllocs()
	for b.Loop() {
		ns := nodes()
		start := time.Now()
		if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutNodes(ctx, "bench", ns) }); err != nil {
			b.Fatalf("PutNodes: %v", err)
		}
		batched += time.Since(start)
		ns = nodes()
		start = time.Now()
		if err := s.Update(ctx, func(tx store.Tx) error {
			for _, nd := range ns {
				if err := tx.PutNode(ctx, "bench", nd); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatalf("PutNode: %v", err)
		}
		single += time.Since(start)
	}
	b.ReportMetric(float64(batched.Nanoseconds())/float64(b.N), "putnodes-ns/tx")
	b.ReportMetric(float64(single.Nanoseconds())/float64(b.N), "putnode-ns/tx")
	b.ReportMetric(100*batched.Seconds()/single.Seconds(), "pct_of_putnode")
}
