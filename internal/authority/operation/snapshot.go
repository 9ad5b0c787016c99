package operation

import (
	"maps"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// An Agent's pure reads (its QueryBoard's strip and View, its strip at initialize and
// ping) are answered from the ledger's snapshot, not under the ledger's lock, so that
// they never wait for a claim batch, a report batch or an admission holding the lock
// across its store transaction (docs/architecture.md, "The project state and its
// driver"). The driver publishes the snapshot when the lock is released
// ([eventlog.Driver.Publish]), with the seq of the last event it reflects; a read
// answers from it only when that seq covers the head it read, and otherwise locks and
// catches up as before, so an answer is as fresh as a read of that head either way.

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
}

// agentSnap is one Agent's part of a ledgerSnap.
type agentSnap struct {
	strip []contract.OperationSlot // stripLocked's; readers copy before they change it
	// latest is the ordinal of the agent's latest settled Operation (hook calls aside),
	// 0 when there is none, and acked whether its outcome was acknowledged: a read that
	// delivered it unacknowledged writes the acknowledgement, under the lock.
	latest int64
	acked  bool
}

// snapshot returns the State as a ledgerSnap ([eventlog.Driver.Publish]), derived from
// the last one it handed out and what changed since. It runs under the project's lock,
// which is why it may note, in the State, what it handed out.
func (l *ledgerState) snapshot() *ledgerSnap {
	prev := l.snap
	setup := l.setupLocked()
	if prev != nil && len(l.touched) == 0 && !l.allowTouched && prev.setupFrom == l.setup {
		return prev // nothing it holds changed: most events are a lease's, or another part's
	}
	s := &ledgerSnap{setup: setup, setupFrom: l.setup}
	switch {
	case prev == nil:
		s.agents, s.allow = make(map[string]*agentSnap, len(l.ops)), maps.Clone(l.allow)
		for agent := range l.ops {
			s.agents[agent] = l.agentSnapLocked(agent)
		}
	default:
		s.agents, s.allow = prev.agents, prev.allow
		if len(l.touched) > 0 {
			s.agents = maps.Clone(prev.agents)
			for agent := range l.touched {
				s.agents[agent] = l.agentSnapLocked(agent)
			}
		}
		if l.allowTouched {
			s.allow = maps.Clone(l.allow)
		}
	}
	clear(l.touched)
	l.allowTouched = false
	l.snap = s
	return s
}

// agentSnapLocked derives agent's part of a snapshot. The project's ledger must be
// locked.
func (l *ledgerState) agentSnapLocked(agent string) *agentSnap {
	a := &agentSnap{strip: l.stripLocked(agent)}
	if last := l.latestSettledLocked(agent); last != nil {
		a.latest, a.acked = last.ordinal, last.acked
	}
	return a
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
