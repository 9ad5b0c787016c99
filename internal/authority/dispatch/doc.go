// Package dispatch is the authority's side of the worker hop: leases with a monotonic
// generation per Connection, work served only for Tools locked on the Connection, claims
// checked against a grant signed under the Connection key, idempotent reports that settle
// Operations, reconciliation by a person, and the sweep that settles work stranded under
// an expired lease ([Dispatcher.Run]).
package dispatch
