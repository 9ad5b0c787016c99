package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// agentBackend is the part of the authority the agent routes need.
type agentBackend interface {
	Agents(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Agent, error)
	CreateAgent(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.CreateAgentRequest) (contract.AgentToken, error)
	RotateAgentToken(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) (contract.AgentToken, error)
	ReplaceHookToken(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) (contract.AgentToken, error)
	RevokeAgent(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) (contract.Agent, error)
}

func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request) error {
	as, err := s.ids.Agents(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, as, func(a contract.Agent) string { return string(a.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleCreateAgent(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.CreateAgentRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	at, err := s.ids.CreateAgent(r.Context(), caller(r), project(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, at)
}

// handleAgentToken replaces an Agent's token: with ?for=hook by a hook token, which
// reaches only the hook routes (docket hook install --replace-token).
func (s *Server) handleAgentToken(w http.ResponseWriter, r *http.Request) error {
	rotate := s.ids.RotateAgentToken
	switch q := r.URL.Query(); {
	case len(q) == 0:
	case len(q) == 1 && len(q["for"]) == 1 && q.Get("for") == "hook":
		rotate = s.ids.ReplaceHookToken
	default:
		return contract.Errorf(contract.CodeInvalidArgument, "the only query this route takes is for=hook, which makes the new token a coding agent's hook token.")
	}
	at, err := rotate(r.Context(), caller(r), project(r), r.PathValue("agent"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, at)
}

func (s *Server) handleRevokeAgent(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ids.RevokeAgent(r.Context(), caller(r), project(r), r.PathValue("agent"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, a)
}
