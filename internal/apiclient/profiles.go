package apiclient

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// Profiles lists the profiles of project's live Agents.
func (c *Client) Profiles(ctx context.Context, project string) ([]contract.AgentProfile, error) {
	return All[contract.AgentProfile](ctx, c, ProjectPath(project, "profiles"))
}

// Profile returns the profile of project's Agent agent (an id or a name).
func (c *Client) Profile(ctx context.Context, project, agent string) (contract.AgentProfile, error) {
	return doOne[contract.AgentProfile](ctx, c, http.MethodGet, ProjectPath(project, "agents", agent, "profile"), nil)
}

// SetProfile replaces the profile of project's Agent agent.
func (c *Client) SetProfile(ctx context.Context, project, agent string, spec contract.ProfileSpec) (contract.AgentProfile, error) {
	return doOne[contract.AgentProfile](ctx, c, http.MethodPut, ProjectPath(project, "agents", agent, "profile"), spec)
}

// ReportRuntime records the state of the runtime of project's Agent agent.
func (c *Client) ReportRuntime(ctx context.Context, project, agent string, st contract.RuntimeStatus) error {
	return c.Do(ctx, http.MethodPut, ProjectPath(project, "agents", agent, "runtime"), st, nil)
}

// ReportWorker records the state of the worker docket start runs for project's
// Connection connection (its name or id).
func (c *Client) ReportWorker(ctx context.Context, project, connection string, st contract.RuntimeStatus) error {
	return c.Do(ctx, http.MethodPut, ProjectPath(project, "connections", connection, "worker"), st, nil)
}
