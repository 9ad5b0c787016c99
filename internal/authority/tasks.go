package authority

import (
	"context"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// PostTask posts req as a task for an Agent of project and returns it queued, with its
// conversation (made when req names none); see [task.Keeper.PostTask]. A member names the
// Agent in req.Agent; an Agent's own runtime posts for itself.
func (a *Authority) PostTask(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.TaskRequest) (contract.Task, error) {
	return a.tasks.PostTask(ctx, c, project, req)
}

// PostMessage adds a member's words to conversation id of agent in project.
func (a *Authority) PostMessage(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID, req contract.MessageRequest) (contract.Task, error) {
	return a.tasks.PostMessage(ctx, c, project, agent, id, req)
}

// Task returns one task of project.
func (a *Authority) Task(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.Task, error) {
	return a.tasks.Task(ctx, c, project, id)
}

// Tasks lists project's tasks, oldest first; agent narrows it to one Agent when not
// empty.
func (a *Authority) Tasks(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Task, error) {
	return a.tasks.Tasks(ctx, c, project, agent)
}

// ClaimTask takes the calling Agent's next task under a lease, long-polling up to
// req.WaitMS; see [task.Keeper.Claim].
func (a *Authority) ClaimTask(ctx context.Context, c identity.Caller, req contract.TaskClaimRequest) (contract.TaskClaim, error) {
	return a.tasks.Claim(ctx, c, req)
}

// RenewTask extends the lease of the calling Agent's claim of task id.
func (a *Authority) RenewTask(ctx context.Context, c identity.Caller, id contract.TaskID, r contract.TaskRenewal) (contract.Task, error) {
	return a.tasks.Renew(ctx, c, id, r)
}

// ReportTask records how the calling Agent's run of task id ended.
func (a *Authority) ReportTask(ctx context.Context, c identity.Caller, id contract.TaskID, r contract.TaskReport) (contract.Task, error) {
	return a.tasks.Report(ctx, c, id, r)
}

// WaitOperations waits up to bound until each of the calling Agent's Operations in ws has
// an outcome; see [task.Keeper.WaitOperations].
func (a *Authority) WaitOperations(ctx context.Context, c identity.Caller, ws []contract.TaskWait, bound time.Duration) (bool, error) {
	return a.tasks.WaitOperations(ctx, c, ws, bound)
}

// ConversationPin returns what conversation id of the calling Agent is held to by its
// tasks — a Case Type and key, and a Case in focus — and who posted them.
func (a *Authority) ConversationPin(ctx context.Context, c identity.Caller, id contract.ConversationID) (contract.CasePin, []contract.Principal, error) {
	return a.tasks.Pin(ctx, c, id)
}

// CancelTask asks, for a member, that task id of project end; see [task.Keeper.Cancel].
func (a *Authority) CancelTask(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.Task, error) {
	return a.tasks.Cancel(ctx, c, project, id)
}
