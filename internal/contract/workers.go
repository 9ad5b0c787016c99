package contract

import "time"

// LeaseState says whether a Connection's worker holds its lease.
type LeaseState string

// Lease states.
const (
	LeaseHeld    LeaseState = "held"    // a worker instance holds a lease that has not expired
	LeaseExpired LeaseState = "expired" // the last lease ran out: no worker polls for this Connection now
	LeaseNever   LeaseState = "never"   // no worker ever acquired a lease on this Connection
)

// WorkerStatus is a Connection as the workers page and docket doctor show it: its lease,
// the Tools locked on it and the Sources bound to it (their non-secret parts).
type WorkerStatus struct {
	Connection Connection `json:"connection"`
	Lease      LeaseState `json:"lease"`
	WorkerID   string     `json:"workerId,omitempty"`
	Generation int64      `json:"workerGeneration,omitempty"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	Tools      []ToolLock `json:"tools"`
	Sources    []Source   `json:"sources"`
	// Supervised is the worker docket start runs for this Connection, as docket start
	// last reported it (PUT .../connections/{connection}/worker): running, restarting,
	// crash_loop with the cause from its log, or stopped. Nil when no docket start ever
	// ran one.
	Supervised *RuntimeStatus `json:"supervised,omitempty"`
}
