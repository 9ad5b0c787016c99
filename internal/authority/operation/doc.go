// Package operation runs an Agent's tool calls as Operations: the write gate that admits
// at most one unresolved write per Agent, the held answer that waits for an outcome, the
// strip of recent Operations every answer carries, Requests and the decisions members
// make on them, artifacts, and the worker hop that runs an executed Action: leases with a
// monotonic generation per Connection, work served only for Tools locked on the
// Connection, claims checked against a grant signed under the Connection key, idempotent
// reports that settle Operations, reconciliation by a person, and the sweep that settles
// work stranded under an expired lease ([Dispatcher.Run]). Its state is one projection
// of each project's event log, the operation ledger: a pure State (ledgerState: the
// Operations, Requests, artifacts, setup, queue, and the hop's claims, reports and lease
// generations) that an [eventlog.Driver] keeps under one lock and one cursor per
// project, so every instance over one store sees the same Operations and every call,
// a hop call included, catches one projection up. What is not from the log, the calls
// held on an Operation, is kept beside the State in the project's ledger, under the same
// lock; while any is held the driver follows the log ([eventlog.Driver.Follow]), and its
// applied notification ([eventlog.Driver.OnApply]) wakes the calls held on what each
// event moved.
package operation
