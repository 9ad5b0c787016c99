package worker_test

import (
	"context"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// nopAdapter is registered where a test needs an adapter to exist but never runs it.
type nopAdapter struct{}

func (nopAdapter) Execute(context.Context, worker.Call) (worker.Outcome, error) {
	return worker.Refuse(contract.Errorf(contract.CodeToolFailed, "nop adapter"))
}

// adapterFunc adapts a function to worker.Adapter.
type adapterFunc func(context.Context, worker.Call) (worker.Outcome, error)

func (f adapterFunc) Execute(ctx context.Context, c worker.Call) (worker.Outcome, error) {
	return f(ctx, c)
}
