package apiclient

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// Blueprints lists project's blueprints (docs/agents.md, "Blueprints").
func (c *Client) Blueprints(ctx context.Context, project string) ([]contract.Blueprint, error) {
	return All[contract.Blueprint](ctx, c, ProjectPath(project, "blueprints"))
}

// Blueprint returns project's blueprint name.
func (c *Client) Blueprint(ctx context.Context, project, name string) (contract.Blueprint, error) {
	return doOne[contract.Blueprint](ctx, c, http.MethodGet, ProjectPath(project, "blueprints", name), nil)
}

// SetBlueprint sets project's blueprint name to spec.
func (c *Client) SetBlueprint(ctx context.Context, project, name string, spec contract.BlueprintSpec) (contract.Blueprint, error) {
	return doOne[contract.Blueprint](ctx, c, http.MethodPut, ProjectPath(project, "blueprints", name), spec)
}

// RemoveBlueprint removes project's blueprint name.
func (c *Client) RemoveBlueprint(ctx context.Context, project, name string) error {
	return c.Do(ctx, http.MethodDelete, ProjectPath(project, "blueprints", name), nil, nil)
}

// SetProfileFromBlueprint replaces the profile of project's Agent agent with a copy of a
// blueprint.
func (c *Client) SetProfileFromBlueprint(ctx context.Context, project, agent string, from contract.FromBlueprint) (contract.AgentProfile, error) {
	return doOne[contract.AgentProfile](ctx, c, http.MethodPost, ProjectPath(project, "agents", agent, "profile", "from-blueprint"), from)
}
