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

// WorkerStatus is a Connection as the workers page and docket doctor show it: its leases,
// the Tools locked on it and the Sources bound to it (their non-secret parts).
//
// A Connection takes work through one lease per worker process (docs/architecture.md,
// "Workers"). Lease is held when any of them is; WorkerID, Generation and ExpiresAt are
// those of the lease granted last, and Leases lists every slot.
type WorkerStatus struct {
	Connection Connection    `json:"connection"`
	Lease      LeaseState    `json:"lease"`
	WorkerID   string        `json:"workerId,omitempty"`
	Generation int64         `json:"workerGeneration,omitempty"`
	ExpiresAt  *time.Time    `json:"expiresAt,omitempty"`
	Leases     []WorkerLease `json:"leases,omitempty"`
	Tools      []ToolLock    `json:"tools"`
	Sources    []Source      `json:"sources"`
	// Supervised is the worker docket start runs for this Connection, as docket start
	// last reported it (PUT .../connections/{connection}/worker): running, restarting,
	// crash_loop with the cause from its log, or stopped. Nil when no docket start ever
	// ran one.
	Supervised *RuntimeStatus `json:"supervised,omitempty"`
}

// WorkerLease is one lease slot of a Connection: the worker instance that holds or last
// held it, its fencing generation, and when it expires. ExpiresAt is nil once the worker
// released it when it stopped.
type WorkerLease struct {
	Slot       int        `json:"slot"`
	State      LeaseState `json:"state"` // held or expired
	WorkerID   string     `json:"workerId"`
	Generation int64      `json:"workerGeneration"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
}
