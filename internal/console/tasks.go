package console

import (
	"context"
	"net/http"
	"time"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// taskBackend is the part of the authority the task routes need.
type taskBackend interface {
	PostTask(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.TaskRequest) (contract.Task, error)
	PostMessage(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID, req contract.MessageRequest) (contract.Task, error)
	Task(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.Task, error)
	Tasks(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Task, error)
	ClaimTask(ctx context.Context, c identity.Caller, req contract.TaskClaimRequest) (contract.TaskClaim, error)
	RenewTask(ctx context.Context, c identity.Caller, id contract.TaskID, r contract.TaskRenewal) (contract.Task, error)
	ReportTask(ctx context.Context, c identity.Caller, id contract.TaskID, r contract.TaskReport) (contract.Task, error)
	WaitOperations(ctx context.Context, c identity.Caller, ws []contract.TaskWait, bound time.Duration) (bool, error)
	CancelTask(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.TaskID) (contract.Task, error)
}

// maxTaskBody bounds a task, a message or a report: its text plus room for the rest.
const maxTaskBody = 2*contract.MaxTaskText + 64<<10

func taskOf(r *http.Request) contract.TaskID { return contract.TaskID(r.PathValue("task")) }

// handlePostTask posts a task for the Agent of the path, for a member.
func (s *Server) handlePostTask(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.TaskRequest](w, r, maxTaskBody)
	if err != nil {
		return err
	}
	agent := r.PathValue("agent")
	if req.Agent != "" && req.Agent != agent {
		return contract.Errorf(contract.CodeInvalidArgument, "the body names agent %q but the path names %q; leave agent out of the body", req.Agent, agent)
	}
	req.Agent = agent
	t, err := s.auth.PostTask(r.Context(), caller(r), project(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, t)
}

// handlePostMessage adds a member's words to an Agent's conversation.
func (s *Server) handlePostMessage(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.MessageRequest](w, r, maxTaskBody)
	if err != nil {
		return err
	}
	t, err := s.auth.PostMessage(r.Context(), caller(r), project(r), r.PathValue("agent"), conversation(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, t)
}

// handleTasks lists a project's tasks for a member; ?agent= narrows it.
func (s *Server) handleTasks(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.auth.Tasks(r.Context(), caller(r), project(r), r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	page, err := paginate(r, ts, func(t contract.Task) string { return string(t.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleTask returns one task of a project for a member.
func (s *Server) handleTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.auth.Task(r.Context(), caller(r), project(r), taskOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// agentProject is the one project of the calling Agent; members name a project in the
// path instead.
func agentProject(c identity.Caller) (contract.ProjectID, error) {
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return "", contract.Errorf(contract.CodeForbidden, "this route is an Agent runtime's own; members use /api/v1/projects/{project}/agents/{agent}/tasks")
	}
	return c.Projects[0], nil
}

// handlePostOwnTask posts a task by an Agent's runtime for itself (its loopback POST
// /task does).
func (s *Server) handlePostOwnTask(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.TaskRequest](w, r, maxTaskBody)
	if err != nil {
		return err
	}
	c := caller(r)
	p, err := agentProject(c)
	if err != nil {
		return err
	}
	t, err := s.auth.PostTask(r.Context(), c, p, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, t)
}

// handleOwnTask returns one of the calling Agent's tasks.
func (s *Server) handleOwnTask(w http.ResponseWriter, r *http.Request) error {
	c := caller(r)
	p, err := agentProject(c)
	if err != nil {
		return err
	}
	t, err := s.auth.Task(r.Context(), c, p, taskOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// handleClaimTask is a runtime's long-poll for its Agent's next task or wake.
func (s *Server) handleClaimTask(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.TaskClaimRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	claim, err := s.auth.ClaimTask(r.Context(), caller(r), req)
	if err != nil && r.Context().Err() != nil {
		// The runtime hung up during its long-poll, and there is nobody to answer; or its
		// token was revoked or replaced, which ended the poll, and it is told why.
		return identity.CredentialEnded(r.Context())
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, claim)
}

// handleRenewTask extends a runtime's claim of a task.
func (s *Server) handleRenewTask(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.TaskRenewal](w, r, s.maxBody)
	if err != nil {
		return err
	}
	t, err := s.auth.RenewTask(r.Context(), caller(r), taskOf(r), req)
	if err != nil && req.WaitMS > 0 && r.Context().Err() != nil {
		// The runtime hung up while its renewal was held, or its token ended the hold.
		return identity.CredentialEnded(r.Context())
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// handleReportTask records how a runtime's run of a task ended.
func (s *Server) handleReportTask(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.TaskReport](w, r, maxTaskBody)
	if err != nil {
		return err
	}
	t, err := s.auth.ReportTask(r.Context(), caller(r), taskOf(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// handleWaitOperations is an Agent's long-poll for the outcomes of its Operations.
func (s *Server) handleWaitOperations(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.OperationsWait](w, r, s.maxBody)
	if err != nil {
		return err
	}
	ok, err := s.auth.WaitOperations(r.Context(), caller(r), req.Waiting, time.Duration(req.WaitMS)*time.Millisecond)
	if err != nil && r.Context().Err() != nil {
		// The runtime hung up during its long-poll, and there is nobody to answer; or its
		// token was revoked or replaced, which ended the poll, and it is told why.
		return identity.CredentialEnded(r.Context())
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, contract.OperationsWaited{Reported: ok})
}

// handleCancelTask cancels a task of a project, for a member (or its delegate): one no
// runtime claimed yet ends at once; else its runtime stops at its next step.
func (s *Server) handleCancelTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.auth.CancelTask(r.Context(), caller(r), project(r), taskOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}
