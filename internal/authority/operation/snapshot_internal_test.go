package operation

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
)

// fullStrip is the strip as read from every Operation of agent, newest first: the latest
// five, every one not settled, the latest settled, at most contract.MaxStrip. It is what
// stripLocked answers, read without the State's count of unsettled Operations.
func fullStrip(l *ledgerState, agent string) []contract.OperationSlot {
	ops := l.ops[agent]
	var keep []*operation
	add := func(op *operation) {
		if op != nil && !slices.Contains(keep, op) && len(keep) < contract.MaxStrip {
			keep = append(keep, op)
		}
	}
	for i := len(ops) - 1; i >= 0 && i >= len(ops)-5; i-- {
		add(ops[i])
	}
	for i := len(ops) - 1; i >= 0; i-- {
		if !ops[i].state.Settled() {
			add(ops[i])
		}
	}
	add(l.latestSettledLocked(agent))
	slices.SortFunc(keep, func(a, b *operation) int { return int(b.ordinal - a.ordinal) })
	out := make([]contract.OperationSlot, 0, len(keep))
	for _, op := range keep {
		out = append(out, contract.OperationSlot{Ordinal: op.ordinal, OperationEntry: op.entry()})
	}
	return out
}

// TestLedger_Snapshot applies random logs of Operations (admitted, changed, acknowledged,
// waiting; some settled, some left needing a person long before the latest), of
// profiles and of a Connection's Tool locks to a State, taking its snapshot at random points as the driver does when the
// lock is released, and checks that each snapshot holds every Agent's strip, latest
// settled Operation, allow-list and setup as the State reads them then, and that no snapshot
// changes after it was handed out, though the State applies on.
func TestLedger_Snapshot(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	states := []contract.OperationState{contract.OpRunning, contract.OpDone, contract.OpFailed, contract.OpNeedsPerson,
		contract.OpWaitingForDecision, contract.OpRefused}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		l := newLedgerState()
		agents := []string{"a", "b", "c"}
		type handed struct {
			snap *ledgerSnap
			want map[string]agentSnap // deep copies, as handed out
		}
		var out []handed
		for seq := int64(1); seq <= 300; seq++ {
			agent := agents[r.IntN(len(agents))]
			n := int64(len(l.ops[agent]))
			var p event.Payload
			switch k := r.IntN(10); {
			case n == 0 || k < 3:
				p = event.OpAdmittedData(event.Operation{Agent: agent, Ordinal: n + 1, Tool: "ApplyAction", Label: "x", State: states[r.IntN(len(states))]})
			case k < 7:
				p = event.OpChangedData(event.Operation{Agent: agent, Ordinal: 1 + r.Int64N(n), State: states[r.IntN(len(states))], Stage: contract.StageAtWorker})
			case k < 8:
				p = event.OpAcknowledgedData(event.Operation{Agent: agent, Ordinal: 1 + r.Int64N(n)})
			case k < 9:
				p = event.OpWaitingData(event.Operation{Agent: agent, Ordinal: 1 + r.Int64N(n), Reason: "no worker"})
			case k < 10 && r.IntN(2) == 0:
				// A Connection's Tool locked or unlocked: the setup the Views are built on.
				lock := contract.ToolLock{Connection: "k1", Tool: "t.x@1", Digest: "sha256:" + strings.Repeat("ab", 32)}
				switch r.IntN(3) {
				case 0:
					p = event.ConnectionCreatedData{Connection: contract.Connection{ID: "k1", Name: "laptop"}}
				case 1:
					p = event.ToolLockedData{ToolLock: lock}
				default:
					p = event.ToolUnlockedData{ToolLock: lock}
				}
			default:
				var spec contract.ProfileSpec
				if r.IntN(2) == 0 {
					spec.Allow = &contract.AllowList{Actions: []string{"x"}}
				}
				p = event.ProfileSetData{Agent: contract.AgentID(agent), ProfileSpec: spec}
			}
			if err := l.Apply(eventlogtest.Event(t, "p", seq, "system", at, p)); err != nil {
				t.Fatalf("seed %d: apply event %d: %v", seed, seq, err)
			}
			if r.IntN(4) != 0 {
				continue
			}
			s := l.snapshot()
			h := handed{snap: s, want: map[string]agentSnap{}}
			for agent := range l.ops {
				want := agentSnap{strip: fullStrip(l, agent)}
				if last := l.latestSettledLocked(agent); last != nil {
					want.latest, want.acked = last.ordinal, last.acked
				}
				if diff := cmp.Diff(want, *s.agents[agent], cmp.AllowUnexported(agentSnap{})); diff != "" {
					t.Fatalf("seed %d, at event %d: agent %s in the snapshot (-State +snapshot):\n%s", seed, seq, agent, diff)
				}
				h.want[agent] = agentSnap{strip: slices.Clone(want.strip), latest: want.latest, acked: want.acked}
			}
			if diff := cmp.Diff(l.setupLocked(), s.setup); diff != "" {
				t.Fatalf("seed %d, at event %d: setup (-State +snapshot):\n%s", seed, seq, diff)
			}
			if diff := cmp.Diff(l.allow, s.allow); diff != "" {
				t.Fatalf("seed %d, at event %d: allow-lists (-State +snapshot):\n%s", seed, seq, diff)
			}
			out = append(out, h)
		}
		for i, h := range out {
			for agent, want := range h.want {
				if diff := cmp.Diff(want, *h.snap.agents[agent], cmp.AllowUnexported(agentSnap{})); diff != "" {
					t.Fatalf("seed %d: snapshot %d changed after it was handed out, agent %s (-handed +now):\n%s", seed, i, agent, diff)
				}
			}
		}
	}
}
