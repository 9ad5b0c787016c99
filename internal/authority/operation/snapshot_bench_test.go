package operation

import (
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// benchLedger returns a State holding ops Operations of ten Agents and ops/2 Requests,
// its snapshot taken, with the seq of its last event.
func benchLedger(b *testing.B, ops int) (*ledgerState, int64) {
	b.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := newLedgerState()
	seq := int64(0)
	apply := func(p event.Payload) {
		seq++
		if err := l.Apply(eventlogtest.Event(b, "p", seq, "system", at, p)); err != nil {
			b.Fatal(err)
		}
	}
	for i := range ops {
		agent := fmt.Sprintf("agt_%d", i%10)
		apply(event.OpAdmittedData(event.Operation{Agent: agent, Ordinal: int64(i/10 + 1), Tool: "ApplyAction", Label: "x", State: contract.OpDone}))
		if i%2 == 0 {
			apply(event.RequestCreatedData{Request: contract.Request{ID: contract.RequestID(fmt.Sprintf("req_%d", i)), Project: "p",
				RequestedBy: contract.NewPrincipal(contract.PrincipalAgent, agent), State: contract.RequestPending, Deadline: at.Add(time.Hour)}})
		}
	}
	l.snapshot()
	return l, seq
}

// BenchmarkLedger_Publish measures what a publication costs after one Operation and one
// Request changed, in projects of growing size: "apply" applies the two events alone,
// "publish" applies them and takes the snapshot, so the difference is the publication's.
// It grows with the table of pages (one pointer for 128 Operations or Requests), not
// with the lists. Run: go test ./internal/authority/operation -run '^$' -bench Ledger_Publish -benchmem
func BenchmarkLedger_Publish(b *testing.B) {
	for _, ops := range []int{1_000, 10_000, 100_000} {
		for _, publish := range []bool{false, true} {
			name := map[bool]string{false: "apply", true: "publish"}[publish]
			b.Run(fmt.Sprintf("ops=%d/%s", ops, name), func(b *testing.B) {
				l, seq := benchLedger(b, ops)
				at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
				evs := make([]store.Event, 0, 2*b.N)
				for i := range b.N {
					agent := fmt.Sprintf("agt_%d", i%10)
					seq++
					evs = append(evs, eventlogtest.Event(b, "p", seq, "system", at, event.OpChangedData(event.Operation{Agent: agent,
						Ordinal: int64(1 + i%(ops/10)), State: contract.OpDone, Reason: fmt.Sprint(i)})))
					seq++
					id := (i % (ops / 2)) * 2
					evs = append(evs, eventlogtest.Event(b, "p", seq, "system", at, event.RequestChangedData{Request: contract.Request{
						ID: contract.RequestID(fmt.Sprintf("req_%d", id)), Project: "p", State: contract.RequestDenied}}))
				}
				b.ResetTimer()
				for i := range b.N {
					for _, e := range evs[2*i : 2*i+2] {
						if err := l.Apply(e); err != nil {
							b.Fatal(err)
						}
					}
					if publish {
						l.snapshot()
					}
				}
			})
		}
	}
}

// BenchmarkLedger_List measures a member's list of every Operation: "snapshot" read
// from a snapshot, the work a read does after the ledger's lock or with no lock at all,
// and "scan" as List read it before, from every Operation of the State, all of it under
// the lock (fullList). Run: go test ./internal/authority/operation -run '^$' -bench Ledger_List -benchmem
func BenchmarkLedger_List(b *testing.B) {
	for _, ops := range []int{1_000, 10_000} {
		l, _ := benchLedger(b, ops)
		s := l.snapshot()
		for _, from := range []string{"snapshot", "scan"} {
			b.Run(fmt.Sprintf("ops=%d/%s", ops, from), func(b *testing.B) {
				for range b.N {
					var got []contract.OperationInfo
					if from == "snapshot" {
						got = s.operations("", false)
					} else {
						got = fullList(l, "", false)
					}
					if len(got) != ops {
						b.Fatalf("listed %d Operations, want %d", len(got), ops)
					}
				}
			})
		}
	}
}
