// Package workhop serves the worker hop, POST /work, and the reconcile route of the
// console API: it decodes, calls the authority's Dispatcher and encodes (DESIGN.md §8).
package workhop
