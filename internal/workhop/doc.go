// Package workhop serves the worker hop, POST /work: it decodes one hop operation, calls
// the authority's Dispatcher and encodes its answer.
package workhop
