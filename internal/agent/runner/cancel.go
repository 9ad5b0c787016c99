package runner

import (
	"fmt"
	"slices"
	"sync"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// cancelSignal is closed once the runtime learns that the task it runs was cancelled:
// from the claim that handed it the task, or from a lease renewal's answer. It is safe
// for concurrent use.
type cancelSignal struct {
	once sync.Once
	done chan struct{}
}

func newCancelSignal() *cancelSignal { return &cancelSignal{done: make(chan struct{})} }

func (s *cancelSignal) fire() { s.once.Do(func() { close(s.done) }) }

func (s *cancelSignal) fired() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// admittedOps keeps the Operations a task's runs admitted, each once by ordinal: those
// an earlier report of the task listed or waited on, then each call of this run that
// became one. Only the run's goroutine uses it.
type admittedOps []contract.TaskOperation

// admittedBefore is what t's earlier reports say its runs admitted.
func admittedBefore(t contract.Task) admittedOps {
	var a admittedOps
	if t.Result != nil {
		for _, op := range t.Result.Operations {
			a.add(op)
		}
	}
	for _, w := range t.Waiting {
		if w.Ordinal > 0 {
			a.add(contract.TaskOperation{CallID: w.CallID, Tool: w.Tool, Ordinal: w.Ordinal})
		}
	}
	return a
}

func (a *admittedOps) add(op contract.TaskOperation) {
	if !slices.ContainsFunc(*a, func(o contract.TaskOperation) bool { return o.Ordinal == op.Ordinal }) {
		*a = append(*a, op)
	}
}

// seen adds the Operation an answered call became, if it became one.
func (a *admittedOps) seen(c agent.ToolCall, res agent.ToolResult) {
	if res.Ordinal > 0 {
		a.add(contract.TaskOperation{CallID: c.ID, Tool: c.Name, Ordinal: res.Ordinal})
	}
}

// cancelledReport is rep for a run of t that stopped for its cancel: waiting while
// Operations its runs admitted have no outcome yet (the wake that comes once they do ends
// it), else cancelled. Either way it names the Operations admitted.
func cancelledReport(rep contract.TaskReport, t contract.Task, out agent.Outcome, admitted admittedOps) contract.TaskReport {
	rep.Operations = slices.Clone(admitted)
	if len(out.Pending) > 0 {
		rep.State, rep.Waiting = contract.TaskWaiting, out.Pending
		return rep
	}
	by := contract.Principal("a member")
	if t.Cancel != nil {
		by = t.Cancel.By
	}
	rep.State = contract.TaskCancelled
	kept := "none of its calls was admitted"
	switch n := len(admitted); {
	case n == 1:
		kept = "the Operation it admitted keeps its outcome"
	case n > 1:
		kept = fmt.Sprintf("the %d Operations it admitted keep their outcome", n)
	}
	rep.Teaching = fmt.Sprintf("cancelled by %s: the run sent no further model request or tool call; %s", by, kept)
	return rep
}
