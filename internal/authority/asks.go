package authority

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// Begin runs call as [operation.Operations.Begin] does; a docket.ask made in a task's
// conversation first learns which task it comes from, its depth and its open asks, from
// the task keeper (docs/agents.md).
func (o *Operations) Begin(ctx context.Context, c identity.Caller, call operation.Call) (*operation.Held, operation.Answer, error) {
	if err := o.origin(ctx, c, &call); err != nil {
		return nil, operation.Answer{}, err
	}
	return o.ops.Begin(ctx, c, call)
}

// Call runs call as [operation.Operations.Call] does, with [Operations.Begin]'s origin.
func (o *Operations) Call(ctx context.Context, c identity.Caller, call operation.Call) (operation.Answer, error) {
	if err := o.origin(ctx, c, &call); err != nil {
		return operation.Answer{}, err
	}
	return o.ops.Call(ctx, c, call)
}

func (o *Operations) origin(ctx context.Context, c identity.Caller, call *operation.Call) error {
	in, ok := call.Input.(*contract.ApplyActionInput)
	if !ok || in.Action != contract.ActionAsk || call.Conversation == "" || c.Kind != contract.PrincipalAgent {
		return nil
	}
	origin, err := o.a.tasks.Origin(ctx, c, call.Conversation)
	if err != nil {
		return fmt.Errorf("docket.ask of %s: %w", c.Principal(), err)
	}
	call.Ask = origin
	return nil
}

// TaskTree returns the tree of asks task id of project belongs to: its root task and
// every task asked for under it, with states.
func (a *Authority) TaskTree(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.TaskNode, error) {
	return a.tasks.Tree(ctx, c, project, id)
}
