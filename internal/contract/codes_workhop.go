package contract

// Error codes of the worker hop's dispatch, receipts and reconciliation, besides the lease codes of work.go.
const (
	CodeLeaseHeld      Code = "worker_lease_held"          // the Connection holds as many live leases as it may (one per worker instance)
	CodeWorkerID       Code = "worker_id"                  // a workerId that is not 1–64 of [a-z0-9_-]
	CodeWorkNotFound   Code = "work_not_found"             // a Claim or Report names work the authority never served
	CodeWorkTaken      Code = "work_taken"                 // a Claim of work already claimed or no longer queued
	CodeReportConflict Code = "work_report_conflict"       // a second, different Report for one claim
	CodeNotNeedsPerson Code = "operation_not_reconcilable" // a reconcile of an Operation that does not need a person
)

// Why an executed Action's work is not running: the reasonCode of its Operation entry
// beside a reason that names the fix. The first five are set while the work
// waits, running and not_dispatched; worker_refused on the failed Operation; worker_lost
// on one that needs a person because its worker went away.
const (
	CodeNoToolLocked      Code = "no_tool_locked"      // the Tool is locked on no live Connection
	CodeNoSourceBound     Code = "no_source_bound"     // no Connection locking the Tool binds a Source the call runs against
	CodeSourceAmbiguous   Code = "source_ambiguous"    // a Connection binds several such Sources and none has the declared name
	CodeNoLiveWorker      Code = "no_live_worker"      // no worker holds a live lease on a Connection that could run it
	CodeToolNotAdvertised Code = "tool_not_advertised" // the worker holding the Connection does not offer the Tool at its locked digest
	CodeWorkerRefused     Code = "worker_refused"      // the worker claimed the work and refused it, with its own code
	CodeWorkerLost        Code = "worker_lost"         // the worker that claimed it lost its lease before reporting: needs_person
)

// Reconcile outcomes: what a person found when they checked an Operation that needed
// them.
const (
	ReconcileDone    = "done"    // the effect happened
	ReconcileFailed  = "failed"  // the effect did not happen
	ReconcileUnknown = "unknown" // the effect cannot be known
)

// ReconcileRequest is the body of POST /api/v1/projects/{project}/operations/{op}/reconcile:
// a member's verdict on an Operation in needs_person. Reason is required for failed and
// unknown.
type ReconcileRequest struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}
