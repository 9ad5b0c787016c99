// Package board is Docket's pure core: a project's Board of facts, rules and goals, the
// Cases that bound acceptance, Action readiness and bound arguments, atomic working-memory
// batches and the bounded Board View. It does no I/O; time arrives as an argument.
package board
