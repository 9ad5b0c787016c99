package operation

import (
	"cmp"
	"encoding/json"
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

// lists is what a snapshot's lists answer, or what the State's full scans do, and what
// its lookups answer: what the answer to each call reads of its own Operation, and each
// Request a delegate's check looks up by id.
type lists struct {
	all, waiting, ofA []contract.OperationInfo
	requests          [3][]contract.Request // at the three instants of listedAt
	own               map[string][]ownOp    // agent → ordinal i's at index i-1, then one past the last
	byID              map[contract.RequestID]lookup
}

// lookup is a Request found by id, with why it stopped taking decisions, or not found.
type lookup struct {
	found bool
	r     contract.Request
	ended string
}

// looked are the Request ids the lookups are made of: those of the first n Requests of
// the log, and one never raised.
func looked(n int) []contract.RequestID {
	ids := []contract.RequestID{"req_none"}
	for i := range n {
		ids = append(ids, contract.RequestID(fmt.Sprintf("req_%d", i)))
	}
	return ids
}

// listedAt are the instants the Requests are listed at: before every deadline, amid
// them and after them all.
func listedAt(at time.Time) [3]time.Time {
	return [3]time.Time{at.Add(-time.Hour), at.Add(90 * time.Minute), at.Add(10 * time.Hour)}
}

func snapLists(s *ledgerSnap, at time.Time, ids []contract.RequestID) lists {
	ls := lists{all: s.operations("", false), waiting: s.operations("", true), ofA: s.operations("a", false),
		own: map[string][]ownOp{}, byID: map[contract.RequestID]lookup{}}
	for i, now := range listedAt(at) {
		ls.requests[i] = s.requestList(now)
	}
	for agent, a := range s.agents {
		for ordinal := int64(1); ; ordinal++ {
			own, ok := a.own(ordinal)
			ls.own[agent] = append(ls.own[agent], own)
			if !ok {
				break
			}
		}
	}
	for _, id := range ids {
		if e, ok := s.request(id); ok {
			ls.byID[id] = lookup{found: true, r: *e.r, ended: e.ended}
		} else {
			ls.byID[id] = lookup{}
		}
	}
	return ls
}

func scanLists(l *ledgerState, at time.Time, ids []contract.RequestID) lists {
	ls := lists{all: fullList(l, "", false), waiting: fullList(l, "", true), ofA: fullList(l, "a", false),
		own: map[string][]ownOp{}, byID: map[contract.RequestID]lookup{}}
	for i, now := range listedAt(at) {
		ls.requests[i] = fullRequests(l, now)
	}
	// As the answer to a call read its own Operation under the lock.
	for agent, ops := range l.ops {
		for _, op := range ops {
			ls.own[agent] = append(ls.own[agent], ownOp{state: op.state, errorCode: op.errorCode, reason: op.reason, result: op.result})
		}
		ls.own[agent] = append(ls.own[agent], ownOp{})
	}
	// As a delegate's check read a Request under the lock.
	for _, id := range ids {
		if r, ok := l.requests[id]; ok {
			ls.byID[id] = lookup{found: true, r: *r, ended: l.ended[id]}
		} else {
			ls.byID[id] = lookup{}
		}
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
// the State under the lock lists then, that what it answers of each Agent's Operation by
// ordinal (what the answer to the call that made it reads: state, error code, reason,
// result) and of each Request by id (a delegate's check, including an id raised only
// after the snapshot) is what the State answered then, and that no snapshot changes
// after it was handed out, though the State applies on. Some logs are long enough for an Agent's Operations
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
			ids   []contract.RequestID // the Requests looked up by id
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
				ch := event.Operation{Agent: agent, Ordinal: 1 + r.Int64N(n), State: states[r.IntN(len(states))], Stage: contract.StageAtWorker}
				switch r.IntN(3) { // what the answer to the call reads
				case 0:
					ch.Result = json.RawMessage(fmt.Sprintf(`{"n":%d}`, seq))
				case 1:
					ch.ErrorCode, ch.Reason = contract.CodeWorkRefused, fmt.Sprintf("refused at %d", seq)
				}
				p = event.OpChangedData(ch)
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
				if diff := gocmp.Diff(want, agentSnap{strip: got.strip, latest: got.latest, acked: got.acked}, gocmp.AllowUnexported(agentSnap{}, pages[*opSnap]{})); diff != "" {
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
			ids := looked(len(requests) + 1) // and the next Request, raised after
			h.ids = ids
			h.lists = scanLists(l, at, ids)
			if got := snapLists(s, at, ids); !reflect.DeepEqual(h.lists, got) {
				t.Fatalf("seed %d, at event %d: lists (-full scan +snapshot):\n%s", seed, seq, gocmp.Diff(h.lists, got, gocmp.AllowUnexported(lists{}, lookup{}, ownOp{})))
			}
			out = append(out, h)
		}
		if n, m := len(l.ops["a"]), len(l.order); events > 300 && (n <= pageLen || m <= pageLen) {
			t.Fatalf("seed %d: agent a has %d Operations and the project %d Requests, too few to fill more than a page of %d", seed, n, m, pageLen)
		}
		for i, h := range out {
			for agent, want := range h.want {
				got := h.snap.agents[agent]
				if diff := gocmp.Diff(want, agentSnap{strip: got.strip, latest: got.latest, acked: got.acked}, gocmp.AllowUnexported(agentSnap{}, pages[*opSnap]{})); diff != "" {
					t.Fatalf("seed %d: snapshot %d changed after it was handed out, agent %s (-handed +now):\n%s", seed, i, agent, diff)
				}
			}
			if got := snapLists(h.snap, at, h.ids); !reflect.DeepEqual(h.lists, got) {
				t.Fatalf("seed %d: the lists of snapshot %d changed after it was handed out (-handed +now):\n%s", seed, i, gocmp.Diff(h.lists, got, gocmp.AllowUnexported(lists{}, lookup{}, ownOp{})))
			}
		}
	}
}
