package authority

import (
	"context"
	"slices"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/profile"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// Blueprints lists project's blueprints; see [profile.Keeper.Blueprints].
func (a *Authority) Blueprints(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Blueprint, error) {
	return a.profiles.Blueprints(ctx, c, project)
}

// Blueprint returns one of project's blueprints; see [profile.Keeper.Blueprint].
func (a *Authority) Blueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Blueprint, error) {
	return a.profiles.Blueprint(ctx, c, project, name)
}

// SetBlueprint sets one of project's blueprints, once it is valid and every Case Type and
// Action its allow-list names is declared on the project's Board (an installed release's,
// the built-in exploration Case Type, a direct Action of a locked Tool) or is a built-in
// Action; see [profile.Keeper.SetBlueprint].
func (a *Authority) SetBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string, spec contract.BlueprintSpec) (contract.Blueprint, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.Blueprint{}, err
	}
	if err := profile.ValidateBlueprint(name, spec); err != nil {
		return contract.Blueprint{}, err
	}
	if err := a.checkAllow(ctx, project, spec.Profile.Allow, contract.CodeBlueprintInvalid, "blueprint "+name); err != nil {
		return contract.Blueprint{}, err
	}
	return a.profiles.SetBlueprint(ctx, c, project, name, spec)
}

// RemoveBlueprint removes one of project's blueprints; profiles made from it keep their
// copy.
func (a *Authority) RemoveBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) error {
	return a.profiles.RemoveBlueprint(ctx, c, project, name)
}

// SetAgentProfileFromBlueprint replaces an Agent's profile with a copy of a blueprint,
// with the Agent's key file and enabled switch, once the blueprint's allow-list still
// names only what the Board declares (a release removed since the blueprint was set is
// refused here); see [profile.Keeper.SetFromBlueprint].
func (a *Authority) SetAgentProfileFromBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, from contract.FromBlueprint) (contract.AgentProfile, error) {
	if err := c.RequireInPerson(project); err != nil {
		return contract.AgentProfile{}, err
	}
	id, err := a.agentID(ctx, c, project, agent)
	if err != nil {
		return contract.AgentProfile{}, err
	}
	bp, err := a.profiles.Blueprint(ctx, c, project, from.Blueprint)
	if err != nil {
		return contract.AgentProfile{}, err
	}
	if from.Digest != nil && *from.Digest != bp.Digest {
		return contract.AgentProfile{}, contract.Errorf(contract.CodeBlueprintChanged,
			"blueprint %s was set again since you read it (now %s); read it again and make the profile from what it says now.", bp.Name, bp.Digest)
	}
	if err := a.checkAllow(ctx, project, bp.Profile.Allow, contract.CodeBlueprintInvalid, "blueprint "+bp.Name); err != nil {
		return contract.AgentProfile{}, err
	}
	return a.profiles.SetFromBlueprint(ctx, c, project, id, contract.BlueprintRef{Name: bp.Name, Digest: bp.Digest}, from.KeyFile, from.Enabled)
}

// builtinActions are the Actions the authority answers itself, which no release declares
// and an allow-list may name.
var builtinActions = []string{contract.ActionAsk, contract.ActionDecide, contract.ActionRetry}

// checkAllow refuses, with code, an allow-list naming a Case Type or an Action that
// project's Board does not declare and that is not a built-in Action.
func (a *Authority) checkAllow(ctx context.Context, project contract.ProjectID, allow *contract.AllowList, code contract.Code, what string) error {
	if allow.Empty() {
		return nil
	}
	return a.boards.View(ctx, project, func(b *board.Board) error { return allowDeclared(b, allow, code, what) })
}

// allowDeclared is checkAllow on b.
func allowDeclared(b *board.Board, allow *contract.AllowList, code contract.Code, what string) error {
	for _, ct := range allow.CaseTypes {
		if !b.HasCaseType(ct) {
			return contract.Errorf(code, "%s allows Case Type %.80q, which no installed release of the project declares; install the release that declares it (docket capability install), or drop it from allow.caseTypes.", what, ct)
		}
	}
	for _, ac := range allow.Actions {
		if !b.HasAction(ac) && !slices.Contains(builtinActions, ac) {
			return contract.Errorf(code, "%s allows Action %.80q, which no installed release declares, no locked Tool offers as a direct Action, and is no built-in Action (%s, %s, %s); name one the View lists, or drop it from allow.actions.",
				what, ac, contract.ActionAsk, contract.ActionDecide, contract.ActionRetry)
		}
	}
	return nil
}
