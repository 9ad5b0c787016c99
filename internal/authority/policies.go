package authority

import (
	"context"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// PublishPolicy publishes a member's policy document as the next version of its kind in
// project; see [policy.Book.Publish].
func (a *Authority) PublishPolicy(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.PublishPolicyRequest) (contract.PolicyVersion, error) {
	return a.policies.Publish(ctx, c, project, req)
}

// Policies lists every version of every policy kind of project, without their text.
func (a *Authority) Policies(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.PolicyVersion, error) {
	return a.policies.List(ctx, c, project)
}

// Policy returns version n of kind in project with its text; n == 0 is the one in force.
func (a *Authority) Policy(ctx context.Context, c identity.Caller, project contract.ProjectID, kind contract.PolicyKind, n int64) (contract.PolicyVersion, error) {
	return a.policies.Show(ctx, c, project, kind, n)
}

// PolicyDiff returns the line difference between two versions of kind in project.
func (a *Authority) PolicyDiff(ctx context.Context, c identity.Caller, project contract.ProjectID, kind contract.PolicyKind, from, to int64) (contract.PolicyDiff, error) {
	return a.policies.Diff(ctx, c, project, kind, from, to)
}

// agentID resolves an Agent of project named by id or name, for member c.
func (a *Authority) agentID(ctx context.Context, c identity.Caller, project contract.ProjectID, ref string) (contract.AgentID, error) {
	if err := c.RequireMember(project); err != nil {
		return "", err
	}
	ag, err := identity.FindAgent(ctx, a.store, project, ref)
	if err != nil {
		return "", eventlog.Refuse(err, "agent "+ref)
	}
	return contract.AgentID(ag.ID), nil
}

// AgentAutonomy returns an Agent's autonomy level and open run windows.
func (a *Authority) AgentAutonomy(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) (contract.Autonomy, error) {
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.Autonomy{}, err
	}
	return a.policies.Autonomy(ctx, c, project, id)
}

// SetAgentLevel sets an Agent's autonomy level; see [policy.Book.SetLevel].
func (a *Authority) SetAgentLevel(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, req contract.SetLevelRequest) (contract.Autonomy, error) {
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.Autonomy{}, err
	}
	return a.policies.SetLevel(ctx, c, project, id, req)
}

// OpenRunWindow opens a run window of an Agent; see [policy.Book.OpenWindow].
func (a *Authority) OpenRunWindow(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, req contract.OpenWindowRequest) (contract.Autonomy, error) {
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.Autonomy{}, err
	}
	return a.policies.OpenWindow(ctx, c, project, id, req)
}
