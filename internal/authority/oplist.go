package authority

import (
	"context"
	"fmt"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// OperationList returns project's Operations for a person: every Agent's, or only those
// of the Agent agent names (its id or name); with waiting, only those that wait for a
// worker, a decision or a person. Each names its Agent and the work id docket reconcile
// takes; see [operation.Operations.List].
func (o *Operations) OperationList(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, waiting bool) ([]contract.OperationInfo, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	var id contract.AgentID
	if agent != "" {
		ag, err := identity.FindAgent(ctx, o.a.store, project, agent)
		if err != nil {
			return nil, fmt.Errorf("list operations: %w", eventlog.Refuse(err, "agent "+agent))
		}
		id = contract.AgentID(ag.ID)
	}
	ops, err := o.ops.List(ctx, c, project, id, waiting)
	if err != nil {
		return nil, err
	}
	ags, err := o.a.dir.Agents(ctx, c, project)
	if err != nil {
		return nil, err
	}
	names := make(map[contract.AgentID]string, len(ags))
	for _, ag := range ags {
		names[ag.ID] = ag.Name
	}
	for i := range ops {
		ops[i].AgentName = names[ops[i].Agent]
		ops[i].Work = operation.WorkID(string(ops[i].Agent), ops[i].Ordinal)
	}
	return ops, nil
}
