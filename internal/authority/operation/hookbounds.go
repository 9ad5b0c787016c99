package operation

import (
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Bounds on one Agent's hook calls, so that a hook token cannot grow the log, the Needs
// page and the held connections without end (docs/security.md, "Bounds"). A call over one
// is refused hook_limit; the hook then denies it, with the teaching, and runs nothing.
const (
	// DefaultMaxHookWaiting is how many of one Agent's hook calls may wait for a decision
	// at once.
	DefaultMaxHookWaiting = 20
	// DefaultMaxHookPerMinute is how many hook calls one Agent may report in any minute.
	DefaultMaxHookPerMinute = 120
)

// checkHookBoundsLocked refuses a hook call of agent at now in mode when the Agent
// reported perMinute calls in the minute before now, or when the call is one to decide
// and waitingMax of its calls wait for a decision. The project's ledger must be locked.
func (l *ledgerState) checkHookBoundsLocked(agent, name, mode string, now time.Time, waitingMax, perMinute int) error {
	waiting, recent := 0, 0
	since := now.Add(-time.Minute)
	for _, op := range l.ops[agent] {
		if op.tool != hookTool {
			continue
		}
		if op.state == contract.OpWaitingForDecision {
			waiting++
		}
		if op.at.After(since) {
			recent++
		}
	}
	switch {
	case recent >= perMinute:
		return contract.Errorf(contract.CodeHookLimit, "agent %s's hook reported %d calls in the last minute, the most it may; slow down and send the call again in a minute", name, recent)
	case mode != contract.HookFree && mode != contract.HookRefuse && waiting >= waitingMax:
		return contract.Errorf(contract.CodeHookLimit, "agent %s has %d hook calls waiting for a decision, the most it may; wait for a member to decide them on Needs you, then send the call again", name, waiting)
	}
	return nil
}
