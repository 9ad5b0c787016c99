package operation

import (
	"cmp"
	"context"
	"slices"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// List returns project's Operations for a member: every Agent's, or only agent's when
// it is not empty, oldest first by admission, each with what it waits for and why; with
// waiting, only those that wait for something (a worker, a decision or a person). The
// strip's Result and Summary are left out: a list says where an Operation stands, and its
// outcome belongs to the Agent it answers.
func (o *Operations) List(ctx context.Context, c identity.Caller, project contract.ProjectID, agent contract.AgentID, waiting bool) ([]contract.OperationInfo, error) {
	l, unlock, err := o.memberRead(ctx, c, project)
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := []contract.OperationInfo{}
	for id, ops := range l.ops {
		if agent != "" && contract.AgentID(id) != agent {
			continue
		}
		for _, op := range ops {
			info := contract.OperationInfo{Agent: contract.AgentID(id), Ordinal: op.ordinal, OperationEntry: op.entry(),
				Waiting: contract.WaitOf(op.state, op.stage)}
			if waiting && info.Waiting == contract.WaitNothing {
				continue
			}
			info.Result, info.Summary = nil, ""
			if x := op.execution; x != nil {
				info.Action, info.CaseID, info.ExecTool = x.Action, x.CaseID, x.Tool
			}
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(x, y contract.OperationInfo) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(x.Agent, y.Agent), cmp.Compare(x.Ordinal, y.Ordinal))
	})
	return out, nil
}

// memberRead returns project's operation ledger locked and caught up with the log, for a
// member's read, and the func that unlocks it.
func (o *Operations) memberRead(ctx context.Context, c identity.Caller, project contract.ProjectID) (*ledger, func(), error) {
	if err := c.RequireMember(project); err != nil {
		return nil, nil, err
	}
	l := o.ledger(project)
	l.lock()
	if err := l.catchUpLocked(ctx, o.store); err != nil {
		l.unlock()
		return nil, nil, err
	}
	return l, l.unlock, nil
}
