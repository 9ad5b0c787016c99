package authority

import (
	"github.com/docketrun/docket/internal/authority/operation"
)

// Operations runs agents' tool calls as Operations over an [Authority]: the
// [operation.Operations] of its store and Boards, with what only the facade can add to
// them, because it needs the authority's other parts: the task a call answers
// ([Operations.Begin]), delegates' consent cards ([Operations.Propose]) and the Operations
// list members read ([Operations.OperationList]). Everything else callers ask of the
// [operation.Operations] itself, which [Operations.Operations] returns. It remembers the
// authority it runs over, so that [NewDispatcher] can hand the worker hop the same store,
// Boards and keys.
type Operations struct {
	ops *operation.Operations
	a   *Authority
}

// NewOperations returns the Operations of a.
func NewOperations(a *Authority, cfg operation.Config) *Operations {
	ops := operation.New(operation.Deps{Store: a.store, Boards: a.boards, Now: a.now, Rand: a.rand, Log: a.log, Policies: a.policies,
		ProjectLog: a.projectLog, AskOpen: a.tasks.AskOpen}, cfg)
	return &Operations{ops: ops, a: a}
}

// Operations returns the operation part o runs over: the write gate, Requests and
// decisions, retries, hooks and artifacts, which the facade adds nothing to. Wiring hands
// it to the callers that need those (docs/architecture.md, "Packages and what each owns").
func (o *Operations) Operations() *operation.Operations { return o.ops }

// NewDispatcher returns the Dispatcher of o's Operations: the authority's side of the
// worker hop.
func NewDispatcher(o *Operations, cfg operation.DispatcherConfig) *operation.Dispatcher {
	d := operation.NewDispatcher(o.ops, operation.DispatcherDeps{Store: o.a.store, Boards: o.a.boards, Keys: o.a.dir, Now: o.a.now, Log: o.a.log}, cfg)
	o.a.adverts = d
	return d
}
