package apiclient

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// Hook reports a coding agent's tool call before it runs, with the Agent's token, and
// returns whether it may run; the answer waits up to call.WaitMillis for a decision.
func (c *Client) Hook(ctx context.Context, call contract.HookCall) (contract.HookVerdict, error) {
	return doOne[contract.HookVerdict](ctx, c, http.MethodPost, "/api/v1/hook/calls", call)
}

// HookOutcome reports what a coding agent's call came to once it ran, and returns the
// Operation that records it.
func (c *Client) HookOutcome(ctx context.Context, out contract.HookOutcome) (int64, error) {
	var r struct {
		Ordinal int64 `json:"ordinal"`
	}
	err := c.Do(ctx, http.MethodPost, "/api/v1/hook/outcomes", out, &r)
	return r.Ordinal, err
}

// HookCalls lists a coding-agent Agent's calls in project with their decisions.
func (c *Client) HookCalls(ctx context.Context, project string, agent contract.AgentID) ([]contract.HookCallEntry, error) {
	return All[contract.HookCallEntry](ctx, c, ProjectPath(project, "agents", string(agent), "hook-calls"))
}
