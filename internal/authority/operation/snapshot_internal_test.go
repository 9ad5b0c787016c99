package operation

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

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

// fullList is a member's list of the Operations, as read under the lock from every
// Operation of the State: what List answered before it read the snapshot.
func fullList(l *ledgerState, agent contract.AgentID, waiting bool) []contract.OperationInfo {
	out := []contract.OperationInfo{}
	for id, ops := range l.ops {
		if agent != "" && contract.AgentID(id) != agent {
			continue
		}
		for _, op := range ops {
			info := contract.OperationInfo{Agent: contract.AgentID(id), Ordinal: op.ordinal, OperationEntry: op.entry(),
				Waiting: contract.WaitOf(op.state, op.stage)}
			if waiting && info.Waiting == contract.WaitNothing {
				continue
			}
			info.Result, info.Summary = nil, ""
			if x := op.execution; x != nil {
				info.Action, info.CaseID, info.ExecTool = x.Action, x.CaseID, x.Tool
			}
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(x, y contract.OperationInfo) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(x.Agent, y.Agent), cmp.Compare(x.Ordinal, y.Ordinal))
	})
	return out
}

// fullRequests is a member's list of the Requests at now, as read under the lock from
// every Request of the State: what Requests answered before it read the snapshot.
func fullRequests(l *ledgerState, now time.Time) []contract.Request {
	out := make([]contract.Request, 0, len(l.order))
	for _, id := range l.order {
		r := *l.requests[id]
		if why := l.expiryLocked(&r, now); why != "" {
			r.State, r.Reason = contract.RequestExpired, why
		}
		out = append(out, r)
	}
	return out
}

// lists is what a snapshot's lists answer, or what the State's full scans do.
type lists struct {
	all, waiting, ofA []contract.OperationInfo
	requests          [3][]contract.Request // at the three instants of listedAt
}

// listedAt are the instants the Requests are listed at: before every deadline, amid
// them and after them all.
func listedAt(at time.Time) [3]time.Time {
	return [3]time.Time{at.Add(-time.Hour), at.Add(90 * time.Minute), at.Add(10 * time.Hour)}
}

func snapLists(s *ledgerSnap, at time.Time) lists {
	ls := lists{all: s.operations("", false), waiting: s.operations("", true), ofA: s.operations("a", false)}
	for i, now := range listedAt(at) {
		ls.requests[i] = s.requestList(now)
	}
	return ls
}

func scanLists(l *ledgerState, at time.Time) lists {
	ls := lists{all: fullList(l, "", false), waiting: fullList(l, "", true), ofA: fullList(l, "a", false)}
	for i, now := range listedAt(at) {
		ls.requests[i] = fullRequests(l, now)
	}
	return ls
}

// TestLedger_Snapshot applies random logs of Operations (admitted, changed, acknowledged,
// waiting; some settled, some left needing a person long before the latest; admitted at
// times that sometimes go back, as two instances' clocks may), of Requests (raised,
// changed, ended by their Agent's revocation or their Tool's change), of profiles and of
// a Connection's Tool locks to a State, taking its snapshot at random points as the
// driver does when the lock is released, and checks that each snapshot holds every
// Agent's strip, latest settled Operation, allow-list and setup as the State reads them
// then, that its lists of Operations (every Agent's, those waiting, one Agent's) and of
// Requests (at instants before, amid and after their deadlines) are those a full scan of
// the State under the lock lists then, and that no snapshot changes after it was handed
// out, though the State applies on. Some logs are long enough for an Agent's Operations
// and the Requests to fill several pages.
func TestLedger_Snapshot(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	states := []contract.OperationState{contract.OpRunning, contract.OpDone, contract.OpFailed, contract.OpNeedsPerson,
		contract.OpWaitingForDecision, contract.OpRefused}
	reqStates := []contract.RequestState{contract.RequestPending, contract.RequestApproved, contract.RequestDenied, contract.RequestExpired}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		l := newLedgerState()
		agents := []string{"a", "b", "c"}
		type handed struct {
			snap  *ledgerSnap
			want  map[string]agentSnap // deep copies, as handed out
			lists lists
		}
		var out []handed
		events, every := int64(300), 4 // a snapshot taken after one event in every
		if seed%20 == 0 {
			events, every = 3500, 32
		}
		var requests []contract.Request
		for seq := int64(1); seq <= events; seq++ {
			agent := agents[r.IntN(len(agents))]
			n := int64(len(l.ops[agent]))
			var p event.Payload
			switch k := r.IntN(12); {
			case n == 0 || k < 3:
				op := event.Operation{Agent: agent, Ordinal: n + 1, Tool: "ApplyAction", Label: "x", State: states[r.IntN(len(states))]}
				if r.IntN(2) == 0 {
					op.Stage = contract.StageNotDispatched
					op.Execution = &contract.ExecutionRequest{Action: "act", CaseID: contract.CaseID(fmt.Sprintf("case_%d", r.IntN(3))), Tool: "t.x@1"}
				}
				p = event.OpAdmittedData(op)
			case k < 7:
				p = event.OpChangedData(event.Operation{Agent: agent, Ordinal: 1 + r.Int64N(n), State: states[r.IntN(len(states))], Stage: contract.StageAtWorker})
			case k < 8:
				p = event.OpAcknowledgedData(event.Operation{Agent: agent, Ordinal: 1 + r.Int64N(n)})
			case k < 9:
				p = event.OpWaitingData(event.Operation{Agent: agent, Ordinal: 1 + r.Int64N(n), Reason: "no worker"})
			case k < 10 && r.IntN(2) == 0:
				// A Connection's Tool locked or unlocked: the setup the Views are built on,
				// and the pending Requests naming the Tool end.
				lock := contract.ToolLock{Connection: "k1", Tool: "t.x@1", Digest: "sha256:" + strings.Repeat("ab", 32)}
				switch r.IntN(3) {
				case 0:
					p = event.ConnectionCreatedData{Connection: contract.Connection{ID: "k1", Name: "laptop"}}
				case 1:
					p = event.ToolLockedData{ToolLock: lock}
				default:
					p = event.ToolUnlockedData{ToolLock: lock}
				}
			case k < 10:
				var spec contract.ProfileSpec
				if r.IntN(2) == 0 {
					spec.Allow = &contract.AllowList{Actions: []string{"x"}}
				}
				p = event.ProfileSetData{Agent: contract.AgentID(agent), ProfileSpec: spec}
			case k < 11 && (len(requests) == 0 || r.IntN(2) == 0):
				req := contract.Request{ID: contract.RequestID(fmt.Sprintf("req_%d", len(requests))), Project: "p",
					RequestedBy: contract.NewPrincipal(contract.PrincipalAgent, agent), State: contract.RequestPending,
					Ordinal: 1 + r.Int64N(n), CreatedAt: at, Deadline: at.Add(time.Duration(r.IntN(180)) * time.Minute)}
				switch r.IntN(3) {
				case 0:
					req.Vector = contract.RequestVector{Action: "t.x@1", Tool: "t.x@1"}
				case 1:
					req.Vector = contract.RequestVector{Action: "act", Tool: "t.x@1"}
				}
				requests = append(requests, req)
				p = event.RequestCreatedData{Request: req}
			case k < 11:
				i := r.IntN(len(requests))
				requests[i].State = reqStates[r.IntN(len(reqStates))]
				p = event.RequestChangedData{Request: requests[i]}
			default:
				if r.IntN(2) == 0 {
					p = event.AgentRevokedData{ID: agent}
				} else {
					p = event.AgentTokenReplacedData{ID: agent}
				}
			}
			// Admitted at times that mostly move on, and sometimes go back.
			if err := l.Apply(eventlogtest.Event(t, "p", seq, "system", at.Add(time.Duration(r.IntN(600)-60)*time.Second), p)); err != nil {
				t.Fatalf("seed %d: apply event %d: %v", seed, seq, err)
			}
			if r.IntN(every) != 0 {
				continue
			}
			s := l.snapshot()
			h := handed{snap: s, want: map[string]agentSnap{}}
			for agent := range l.ops {
				want := agentSnap{strip: fullStrip(l, agent)}
				if last := l.latestSettledLocked(agent); last != nil {
					want.latest, want.acked = last.ordinal, last.acked
				}
				got := s.agents[agent]
				if diff := gocmp.Diff(want, agentSnap{strip: got.strip, latest: got.latest, acked: got.acked}, gocmp.AllowUnexported(agentSnap{}, pages[*contract.OperationInfo]{})); diff != "" {
					t.Fatalf("seed %d, at event %d: agent %s in the snapshot (-State +snapshot):\n%s", seed, seq, agent, diff)
				}
				h.want[agent] = agentSnap{strip: slices.Clone(want.strip), latest: want.latest, acked: want.acked}
			}
			if diff := gocmp.Diff(l.setupLocked(), s.setup); diff != "" {
				t.Fatalf("seed %d, at event %d: setup (-State +snapshot):\n%s", seed, seq, diff)
			}
			if diff := gocmp.Diff(l.allow, s.allow); diff != "" {
				t.Fatalf("seed %d, at event %d: allow-lists (-State +snapshot):\n%s", seed, seq, diff)
			}
			h.lists = scanLists(l, at)
			if got := snapLists(s, at); !reflect.DeepEqual(h.lists, got) {
				t.Fatalf("seed %d, at event %d: lists (-full scan +snapshot):\n%s", seed, seq, gocmp.Diff(h.lists, got, gocmp.AllowUnexported(lists{})))
			}
			out = append(out, h)
		}
		if n, m := len(l.ops["a"]), len(l.order); events > 300 && (n <= pageLen || m <= pageLen) {
			t.Fatalf("seed %d: agent a has %d Operations and the project %d Requests, too few to fill more than a page of %d", seed, n, m, pageLen)
		}
		for i, h := range out {
			for agent, want := range h.want {
				got := h.snap.agents[agent]
				if diff := gocmp.Diff(want, agentSnap{strip: got.strip, latest: got.latest, acked: got.acked}, gocmp.AllowUnexported(agentSnap{}, pages[*contract.OperationInfo]{})); diff != "" {
					t.Fatalf("seed %d: snapshot %d changed after it was handed out, agent %s (-handed +now):\n%s", seed, i, agent, diff)
				}
			}
			if got := snapLists(h.snap, at); !reflect.DeepEqual(h.lists, got) {
				t.Fatalf("seed %d: the lists of snapshot %d changed after it was handed out (-handed +now):\n%s", seed, i, gocmp.Diff(h.lists, got, gocmp.AllowUnexported(lists{})))
			}
		}
	}
}
