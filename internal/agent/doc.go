// Package agent provides the pure parts of Docket's agent runtime: the [Provider] contract
// that model clients implement, the conversation types they share, model configuration and
// key handling, run budgets with a price table, the bounded tool-output view, and the
// system prompt.
package agent
