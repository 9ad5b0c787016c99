package apiclient

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// ToolInventory returns the inventory of project's Connection connection: every Tool its
// worker advertises or that is locked on it, and its Sources.
func (c *Client) ToolInventory(ctx context.Context, project, connection string) (contract.ConnectionTools, error) {
	return doOne[contract.ConnectionTools](ctx, c, http.MethodGet, ProjectPath(project, "connections", connection, "inventory"), nil)
}

// LockTool locks tool on project's Connection connection. An empty digest locks the one
// the Connection's worker advertises now; an empty approval takes the default of the
// Tool's kind.
func (c *Client) LockTool(ctx context.Context, project, connection, tool, digest, approval string) (contract.ToolLock, error) {
	return doOne[contract.ToolLock](ctx, c, http.MethodPut, ProjectPath(project, "connections", connection, "tools", tool),
		contract.ToolLock{Tool: tool, Digest: digest, Approval: approval})
}

// UnlockTool takes the lock of tool off project's Connection connection and returns the
// lock as it was.
func (c *Client) UnlockTool(ctx context.Context, project, connection, tool string) (contract.ToolLock, error) {
	return doOne[contract.ToolLock](ctx, c, http.MethodDelete, ProjectPath(project, "connections", connection, "tools", tool), nil)
}

// SetToolApproval sets what the direct Action of tool, locked on project's Connection
// connection, needs: none, person or a delegation class.
func (c *Client) SetToolApproval(ctx context.Context, project, connection, tool, approval string) (contract.ToolLock, error) {
	return doOne[contract.ToolLock](ctx, c, http.MethodPut, ProjectPath(project, "connections", connection, "tools", tool, "approval"),
		contract.ToolApprovalRequest{Approval: approval})
}
