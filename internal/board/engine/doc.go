// Package engine evaluates Board programs: ground atoms with named arguments, rules with
// strong negation and negation-as-failure, built-ins and aggregates, stratified semi-naive
// forward chaining with tiers, provenance and incremental truth maintenance. It does no I/O.
package engine
