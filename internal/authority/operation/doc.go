// Package operation runs an Agent's tool calls as Operations: the write gate that admits
// at most one unresolved write per Agent, the held answer that waits for an outcome, the
// strip of recent Operations every answer carries, Requests and the decisions members
// make on them, and artifacts. Its state is the operation ledger, a projection of the
// project's event log, so every instance over one store sees the same Operations.
package operation
