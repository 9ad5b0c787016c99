package operation

import (
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// DefaultMaxWritesPerMinute is how many of one Agent's calls at /mcp may pass the write
// gate and become Operations in any minute, so that an Agent's token cannot grow the log
// and the store without end one write at a time (docs/security.md, "Bounds"). A write over
// it is refused operation_limit with no Operation. Reads (QueryBoard, ReadArtifact) never
// count, nor do an orchestrator's decisions and retries, which act on a Request or an
// Operation that exists, nor hook calls, which have bounds of their own (hookbounds.go).
const DefaultMaxWritesPerMinute = 120

// writeBoundLocked refuses a write of agent at now when perMinute of its own writes were
// admitted in the minute before now. An Agent's Operations are kept in ordinal order,
// which is the order they were admitted in under the log head's lock, so the count reads
// back from the newest and stops at the first one older than the minute. The project's
// ledger must be locked.
func (l *ledgerState) writeBoundLocked(agent, name string, now time.Time, perMinute int) *contract.Error {
	since := now.Add(-time.Minute)
	recent := 0
	ops := l.ops[agent]
	for i := len(ops) - 1; i >= 0; i-- {
		op := ops[i]
		if op.tool == hookTool || op.retryOf != 0 {
			continue // a hook call, or a retry a member or an orchestrator made
		}
		if !op.at.After(since) {
			break
		}
		recent++
	}
	if recent < perMinute {
		return nil
	}
	return contract.Errorf(contract.CodeOperationLimit,
		"agent %s made %d writes in the last minute, the most it may; nothing was written: read the Board with QueryBoard, and send the write again in a minute", name, recent)
}
