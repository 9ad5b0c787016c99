package authority

import (
	"github.com/docketrun/docket/internal/authority/conversation"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// Operations and the worker hop live in package operation; these names keep the callers
// of the facade unchanged.
type (
	OperationsConfig = operation.Config
	Call             = operation.Call
	Answer           = operation.Answer
	Held             = operation.Held
	Dispatch         = operation.Dispatch
	Dispatcher       = operation.Dispatcher
	DispatcherConfig = operation.DispatcherConfig
)

// Defaults for [OperationsConfig] and [DispatcherConfig].
const (
	DefaultHoldBound  = operation.DefaultHoldBound
	DefaultRequestTTL = operation.DefaultRequestTTL
	DefaultSweepEvery = operation.DefaultSweepEvery
	DefaultLeaseTTL   = operation.DefaultLeaseTTL
	DefaultPollWait   = operation.DefaultPollWait
	DefaultGrantTTL   = operation.DefaultGrantTTL
	DefaultMaxRows    = operation.DefaultMaxRows
)

// Bounds on one Agent's hook calls, writes at /mcp and conversation saves; see
// [operation.DefaultMaxHookWaiting], [operation.DefaultMaxWritesPerMinute] and
// [conversation.MaxSavedPerHour].
const (
	DefaultMaxHookWaiting          = operation.DefaultMaxHookWaiting
	DefaultMaxHookPerMinute        = operation.DefaultMaxHookPerMinute
	DefaultMaxWritesPerMinute      = operation.DefaultMaxWritesPerMinute
	MaxConversationBytesPerHour    = conversation.MaxSavedPerHour
	MaxConversationsStartedPerHour = conversation.MaxStartedPerHour
)

// Operations runs agents' tool calls as Operations over an [Authority]; see
// [operation.Operations], whose methods it has. It remembers the authority it runs over,
// so that [NewDispatcher] can hand the worker hop the same store, Boards and keys.
type Operations struct {
	*operation.Operations
	a *Authority
}

// NewOperations returns the Operations of a.
func NewOperations(a *Authority, cfg OperationsConfig) *Operations {
	ops := operation.New(operation.Deps{Store: a.store, Boards: a.boards, Now: a.now, Rand: a.rand, Log: a.log, Policies: a.policies}, cfg)
	return &Operations{Operations: ops, a: a}
}

// NewDispatcher returns the Dispatcher of o's Operations: the authority's side of the
// worker hop.
func NewDispatcher(o *Operations, cfg DispatcherConfig) *Dispatcher {
	d := operation.NewDispatcher(o.Operations, operation.DispatcherDeps{Store: o.a.store, Boards: o.a.boards, Keys: o.a.Directory, Now: o.a.now, Log: o.a.log}, cfg)
	o.a.adverts = d
	return d
}

// WorkID names the work of the agent's Operation ordinal: "<agent>.<ordinal>".
func WorkID(agent string, ordinal int64) string { return operation.WorkID(agent, ordinal) }

// RequestDigest returns the digest a Request is bound to.
func RequestDigest(v contract.RequestVector) (string, error) { return operation.RequestDigest(v) }
