package operation

import (
	"cmp"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// An Agent's pure reads (its QueryBoard's strip and View, its strip at initialize and
// ping), and the answer to its write once the write's hold ended, are answered from the
// ledger's snapshot, not under the ledger's lock, so that
// they never wait for a claim batch, a report batch or an admission holding the lock
// across its store transaction (docs/architecture.md, "The project state and its
// driver"). The driver publishes the snapshot when the lock is released
// ([eventlog.Driver.Publish]), with the seq of the last event it reflects; a read
// answers from it only when that seq covers the head it read, and otherwise locks and
// catches up as before, so an answer is as fresh as a read of that head either way. A
// member's lists of Operations and of Requests, a delegate's check of the Request it is
// about to decide, and an orchestrator's decisions, are read from it the same way
// (list.go, decision.go, orchestrator.go): every Operation and every Request of the
// project is in it, in pages the snapshots share ([pages]).

// ledgerSnap is what a ledgerState hands out for those reads: nothing in it is changed
// once handed out. Each Agent's part is derived when the Agent's Operations change, and
// shared with the snapshots after that until they change again.
type ledgerSnap struct {
	agents map[string]*agentSnap // agent id → its part; an Agent with no Operation has none
	setup  board.Setup           // setupLocked's, whose map nothing writes
	allow  map[string]*contract.AllowList
	// setupFrom is the State's setup it was copied from: the State makes a new one
	// after each event that may change it.
	setupFrom *board.Setup
	// requests is every Request of the project, in creation order, and reqAt the index
	// of each in it, shared with the State: the Requests past requests' length are not
	// this snapshot's.
	requests pages[reqEntry]
	reqAt    *reqIndex
}

// reqIndex is each Request's index in the order the State created them, kept by the
// State under its lock and read by its snapshots without it: an index, once given, never
// changes, and a snapshot takes only those below its count of Requests, so a lookup in
// it is one in the State as the snapshot was taken. A rebuilt State ([eventlog.Cursor])
// starts a new one; the snapshots of the State it replaced keep theirs.
type reqIndex struct {
	m sync.Map // contract.RequestID → int; written once per Request, read many times
}

// at returns the index of Request id, and false when the State never applied it.
func (x *reqIndex) at(id contract.RequestID) (int, bool) {
	i, ok := x.m.Load(id)
	if !ok {
		return 0, false
	}
	return i.(int), true
}

// add gives Request id the index i. It is called once per Request, under the State's
// lock.
func (x *reqIndex) add(id contract.RequestID, i int) { x.m.Store(id, i) }

// reqEntry is one Request in a ledgerSnap.
type reqEntry struct {
	r     *contract.Request // the State's, which it replaces rather than changes
	ended string            // why it stopped taking decisions ([ledgerState.ended]), or ""
}

// agentSnap is one Agent's part of a ledgerSnap.
type agentSnap struct {
	strip []contract.OperationSlot // stripLocked's; readers copy before they change it
	// latest is the ordinal of the agent's latest settled Operation (hook calls aside),
	// 0 when there is none, and acked whether its outcome was acknowledged: a read that
	// delivered it unacknowledged writes the acknowledgement, under the lock.
	latest int64
	acked  bool
	// ops is every Operation of the agent, ordinal i at index i-1.
	ops pages[*opSnap]
}

// opSnap is one Operation in a ledgerSnap: as a member's list shows it ([listInfo]), and
// what the answer to the call that made it reads of it ([operation.own]).
type opSnap struct {
	info contract.OperationInfo
	own  ownOp
}

// snapshot returns the State as a ledgerSnap ([eventlog.Driver.Publish]), derived from
// the last one it handed out and what changed since. It runs under the project's lock,
// which is why it may note, in the State, what it handed out; a member's read that had
// to lock the ledger calls it too, and reads the lists after unlocking (list.go).
func (l *ledgerState) snapshot() *ledgerSnap {
	prev := l.snap
	setup := l.setupLocked()
	if prev != nil && len(l.touched) == 0 && !l.allowTouched && len(l.reqTouched) == 0 && prev.setupFrom == l.setup {
		return prev // nothing it holds changed: most events are a lease's, or another part's
	}
	s := &ledgerSnap{setup: setup, setupFrom: l.setup, reqAt: l.reqAt}
	switch {
	case prev == nil:
		s.agents, s.allow = make(map[string]*agentSnap, len(l.ops)), maps.Clone(l.allow)
		for agent := range l.ops {
			s.agents[agent] = l.agentSnapLocked(agent, nil, nil)
		}
	default:
		s.agents, s.allow, s.requests = prev.agents, prev.allow, prev.requests
		if len(l.touched) > 0 {
			s.agents = maps.Clone(prev.agents)
			for agent, changed := range l.touched {
				s.agents[agent] = l.agentSnapLocked(agent, prev.agents[agent], changed)
			}
		}
		if l.allowTouched {
			s.allow = maps.Clone(l.allow)
		}
	}
	if prev == nil || len(l.reqTouched) > 0 {
		s.requests = s.requests.with(len(l.order), l.reqTouched, func(i int) reqEntry {
			id := l.order[i]
			return reqEntry{r: l.requests[id], ended: l.ended[id]}
		})
	}
	clear(l.touched)
	l.allowTouched, l.reqTouched = false, l.reqTouched[:0]
	l.snap = s
	return s
}

// agentSnapLocked derives agent's part of a snapshot from prev, its part in the last one
// (nil for none), and changed, the indexes of its Operations that changed since. The
// project's ledger must be locked.
func (l *ledgerState) agentSnapLocked(agent string, prev *agentSnap, changed []int) *agentSnap {
	slices.Sort(changed)
	a := &agentSnap{}
	if prev != nil {
		a.strip, a.ops = l.stripFromLocked(agent, prev.strip, changed), prev.ops
	} else {
		a.strip = l.stripLocked(agent)
	}
	if last := l.latestSettledLocked(agent); last != nil {
		a.latest, a.acked = last.ordinal, last.acked
	}
	ops := l.ops[agent]
	a.ops = a.ops.with(len(ops), changed, func(i int) *opSnap {
		return &opSnap{info: listInfo(agent, ops[i]), own: ops[i].own()}
	})
	return a
}

// listInfo is agent's op as a member's list shows it ([Operations.List]): the strip's
// Result and Summary are left out, since a list says where an Operation stands and its
// outcome belongs to the Agent it answers.
func listInfo(agent string, op *operation) contract.OperationInfo {
	info := contract.OperationInfo{Agent: contract.AgentID(agent), Ordinal: op.ordinal, OperationEntry: op.entry(),
		Waiting: contract.WaitOf(op.state, op.stage)}
	info.Result, info.Summary = nil, ""
	if x := op.execution; x != nil {
		info.Action, info.CaseID, info.ExecTool = x.Action, x.CaseID, x.Tool
	}
	return info
}

// operations lists the snapshot's Operations as [Operations.List] answers them: every
// Agent's, or only agent's when it is not empty, oldest first by admission; with waiting,
// only those that wait for something. The list is the caller's.
func (s *ledgerSnap) operations(agent contract.AgentID, waiting bool) []contract.OperationInfo {
	var in []*contract.OperationInfo // sorted as pointers, a word each, and copied once
	for id, a := range s.agents {
		if agent != "" && contract.AgentID(id) != agent {
			continue
		}
		for op := range a.ops.all() {
			info := &op.info
			if waiting && info.Waiting == contract.WaitNothing {
				continue
			}
			in = append(in, info)
		}
	}
	slices.SortFunc(in, func(x, y *contract.OperationInfo) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(x.Agent, y.Agent), cmp.Compare(x.Ordinal, y.Ordinal))
	})
	out := make([]contract.OperationInfo, len(in))
	for i, info := range in {
		out[i] = *info
	}
	return out
}

// requestList lists the snapshot's Requests as [Operations.Requests] answers them, oldest
// first, a pending one that no longer takes a decision at now shown expired, with why.
// The list is the caller's.
func (s *ledgerSnap) requestList(now time.Time) []contract.Request {
	out := make([]contract.Request, 0, s.requests.n)
	for e := range s.requests.all() {
		r := *e.r
		if why := expiryOf(&r, e.ended, now); why != "" {
			r.State, r.Reason = contract.RequestExpired, why
		}
		out = append(out, r)
	}
	return out
}

// request returns Request id as the snapshot holds it, with why it stopped taking
// decisions ([ledgerState.ended]), and false when the project had no such Request at the
// snapshot's seq.
func (s *ledgerSnap) request(id contract.RequestID) (reqEntry, bool) {
	i, ok := s.reqAt.at(id)
	if !ok || i >= s.requests.n {
		return reqEntry{}, false
	}
	return s.requests.at(i), true
}

// own returns what the answer to the call that made the agent's Operation ordinal reads
// of it, and false when the snapshot does not hold that Operation.
func (a *agentSnap) own(ordinal int64) (ownOp, bool) {
	if a == nil || ordinal < 1 || ordinal > int64(a.ops.n) {
		return ownOp{}, false
	}
	return a.ops.at(int(ordinal - 1)).own, true
}

// agentSetup is agentSetupLocked as the snapshot holds it.
func (s *ledgerSnap) agentSetup(agent string) board.Setup {
	setup := s.setup
	setup.Allow = s.allow[agent]
	return setup
}

// mustAcknowledge reports whether a read of agent that delivered what delivered says
// would acknowledge its latest outcome (see [Operations.acknowledgeLocked]): a write,
// made under the lock.
func (a *agentSnap) mustAcknowledge(delivered func(int64) bool) bool {
	return a != nil && a.latest != 0 && !a.acked && delivered != nil && delivered(a.latest)
}

// A [pages] keeps its elements in leaves of leafLen, leafLen leaves to a page: a change
// copies a leaf (16 words) and its page's table of leaves (8), where a page held its 128
// elements itself and a change copied all of them (a kilobyte per changed Operation, on
// every publication that changed an Agent's Operations: benchmarks/README.md).
const (
	leafLen = 16
	pageLen = leafLen * pageLeaves // how many elements a page of a [pages] holds
)

// pageLeaves is how many leaves a page holds.
const pageLeaves = 8

// leaf holds leafLen elements of a [pages]; page holds pageLeaves leaves.
type (
	leaf[T any] [leafLen]T
	page[T any] [pageLeaves]*leaf[T]
)

// pages is a list that only grows, kept in fixed pages that snapshots share: the next
// snapshot's list copies the table of pages and, of the pages and leaves that changed,
// the path to each change, and shares the others, so a publication costs what changed
// since the last one, not the length of the list (a project's every Operation and
// Request). Nothing in a pages is changed once it was handed out.
type pages[T any] struct {
	n     int
	table []*page[T]
}

// with returns p grown to n elements, those at the indexes in changed (which it sorts)
// and those past p's end read with get, the others shared with p, which reads as it did.
// A page or a leaf that p shares and in which only elements past p's end are set is
// written in place: p, and every list before it, ends before them and never reads them
// (nor a leaf p does not have), so an Operation admitted does not copy the leaf of its
// Agent's latest ones. That holds because a pages is grown at most once, the ledger's
// snapshots being one chain, each derived from the last (snapshot.go); grown twice, the
// second would write where the first list reads.
func (p pages[T]) with(n int, changed []int, get func(i int) T) pages[T] {
	out := pages[T]{n: n, table: make([]*page[T], (n+pageLen-1)/pageLen)}
	copy(out.table, p.table)
	slices.Sort(changed)
	// The last page and leaf made out's own: indexes come in order, those of p's
	// elements first, so each is copied at most once, and one whose first index set is
	// past p's end has no other set.
	ownedPage, ownedLeaf := -1, -1
	set := func(i int) {
		k, j := i/pageLen, i%pageLen/leafLen
		if k != ownedPage {
			switch old := out.table[k]; {
			case old == nil:
				out.table[k] = new(page[T])
			case i < p.n:
				pg := *old
				out.table[k] = &pg
			}
			ownedPage, ownedLeaf = k, -1
		}
		pg := out.table[k]
		if j != ownedLeaf {
			switch old := pg[j]; {
			case old == nil:
				pg[j] = new(leaf[T])
			case i < p.n:
				lf := *old
				pg[j] = &lf
			}
			ownedLeaf = j
		}
		pg[j][i%leafLen] = get(i)
	}
	for _, i := range changed {
		if i >= 0 && i < min(p.n, n) {
			set(i)
		}
	}
	for i := p.n; i < n; i++ {
		set(i)
	}
	return out
}

// at returns p's element i, which must be below p's length.
func (p pages[T]) at(i int) T { return p.table[i/pageLen][i%pageLen/leafLen][i%leafLen] }

// all yields p's elements in order.
func (p pages[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := range p.n {
			if !yield(p.at(i)) {
				return
			}
		}
	}
}
