package authority

import (
	"context"
	"reflect"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/profile"
	"github.com/docketrun/docket/internal/contract"
)

// AgentProfile returns an Agent's profile; see [profile.Keeper.Profile].
func (a *Authority) AgentProfile(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) (contract.AgentProfile, error) {
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.AgentProfile{}, err
	}
	return a.profiles.Profile(ctx, c, project, id)
}

// AgentProfiles lists the profiles of project's live Agents.
func (a *Authority) AgentProfiles(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.AgentProfile, error) {
	return a.profiles.List(ctx, c, project)
}

// SetAgentProfile replaces an Agent's profile, once every Case Type and Action its
// allow-list names is declared (as for a blueprint); see [profile.Keeper.Set].
func (a *Authority) SetAgentProfile(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, spec contract.ProfileSpec) (contract.AgentProfile, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.AgentProfile{}, err
	}
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.AgentProfile{}, err
	}
	if err := profile.Validate(spec); err != nil {
		return contract.AgentProfile{}, err
	}
	// An allow-list the profile already holds was checked when it was set: starting or
	// stopping a runtime is not refused because a release went since.
	old, err := a.profiles.Profile(ctx, c, project, id)
	if err != nil && contract.CodeOf(err) != contract.CodeNotFound {
		return contract.AgentProfile{}, err
	}
	if !reflect.DeepEqual(old.Allow, spec.Allow) {
		if err := a.checkAllow(ctx, project, spec.Allow, contract.CodeProfileInvalid, "the profile"); err != nil {
			return contract.AgentProfile{}, err
		}
	}
	return a.profiles.Set(ctx, c, project, id, spec)
}

// ReportAgentRuntime records the state of an Agent's runtime; see [profile.Keeper.Report].
func (a *Authority) ReportAgentRuntime(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, st contract.RuntimeStatus) (contract.AgentProfile, error) {
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.AgentProfile{}, err
	}
	return a.profiles.Report(ctx, c, project, id, st)
}
