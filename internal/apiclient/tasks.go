package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// PostTask posts req for project's Agent agent, as a member.
func (c *Client) PostTask(ctx context.Context, project, agent string, req contract.TaskRequest) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodPost, ProjectPath(project, "agents", agent, "tasks"), req)
}

// PostMessage adds req's words to conversation id of project's Agent agent, as a member.
func (c *Client) PostMessage(ctx context.Context, project, agent, id string, req contract.MessageRequest) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodPost, ProjectPath(project, "agents", agent, "conversations", id, "messages"), req)
}

// Tasks lists project's tasks, every page; agent narrows it when not empty.
func (c *Client) Tasks(ctx context.Context, project, agent string) ([]contract.Task, error) {
	return All[contract.Task](ctx, c, byAgent(ProjectPath(project, "tasks"), agent))
}

// Task returns one task of project, as a member.
func (c *Client) Task(ctx context.Context, project, id string) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodGet, ProjectPath(project, "tasks", id), nil)
}

// PostOwnTask posts req for the calling Agent itself.
func (c *Client) PostOwnTask(ctx context.Context, req contract.TaskRequest) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodPost, "/api/v1/tasks", req)
}

// OwnTask returns one of the calling Agent's tasks.
func (c *Client) OwnTask(ctx context.Context, id contract.TaskID) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(string(id)), nil)
}

// ClaimTask long-polls, up to wait, for the calling Agent's next task or wake.
func (c *Client) ClaimTask(ctx context.Context, wait time.Duration) (contract.TaskClaim, error) {
	return doOne[contract.TaskClaim](ctx, c, http.MethodPost, "/api/v1/tasks/claim", contract.TaskClaimRequest{WaitMS: int(wait.Milliseconds())})
}

// ClaimOwnTask long-polls, up to wait, for the calling Agent's task id or its wake: the
// claim of docket agent run, which posts its own task and runs it itself.
func (c *Client) ClaimOwnTask(ctx context.Context, id contract.TaskID, wait time.Duration) (contract.TaskClaim, error) {
	return doOne[contract.TaskClaim](ctx, c, http.MethodPost, "/api/v1/tasks/claim", contract.TaskClaimRequest{WaitMS: int(wait.Milliseconds()), Task: id})
}

// RenewTask extends the calling Agent's claim of task id, attempt r.Attempt, saying in
// r.Wait what its run waits on, if anything.
func (c *Client) RenewTask(ctx context.Context, id contract.TaskID, r contract.TaskRenewal) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(string(id))+"/renew", r)
}

// ReportTask reports how the calling Agent's run of task id ended.
func (c *Client) ReportTask(ctx context.Context, id contract.TaskID, r contract.TaskReport) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(string(id))+"/report", r)
}

// WaitOperations long-polls, up to wait, until each of the calling Agent's Operations in
// ws has an outcome; it reports whether all did.
func (c *Client) WaitOperations(ctx context.Context, ws []contract.TaskWait, wait time.Duration) (bool, error) {
	var out contract.OperationsWaited
	err := c.Do(ctx, http.MethodPost, "/api/v1/operations/wait", contract.OperationsWait{Waiting: ws, WaitMS: int(wait.Milliseconds())}, &out)
	return out.Reported, err
}

// CancelTask cancels task id of project, as a member: one no runtime claimed yet ends at
// once; else its runtime stops at its next step.
func (c *Client) CancelTask(ctx context.Context, project, id string) (contract.Task, error) {
	return doOne[contract.Task](ctx, c, http.MethodPost, ProjectPath(project, "tasks", id, "cancel"), nil)
}

// TaskTree returns the tree of asks task id of project belongs to: GET
// /api/v1/projects/{project}/tasks/{task}/tree.
func (c *Client) TaskTree(ctx context.Context, project, id string) (contract.TaskNode, error) {
	return doOne[contract.TaskNode](ctx, c, http.MethodGet, ProjectPath(project, "tasks", id, "tree"), nil)
}
