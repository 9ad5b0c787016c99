package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
)

// agentBackend is the part of the authority the agent routes need.
type agentBackend interface {
	Agents(ctx context.Context, c authority.Caller, project contract.ProjectID) ([]contract.Agent, error)
	CreateAgent(ctx context.Context, c authority.Caller, project contract.ProjectID, req contract.CreateAgentRequest) (contract.AgentToken, error)
	RotateAgentToken(ctx context.Context, c authority.Caller, project contract.ProjectID, agent string) (contract.AgentToken, error)
	RevokeAgent(ctx context.Context, c authority.Caller, project contract.ProjectID, agent string) (contract.Agent, error)
}

func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request) error {
	as, err := s.auth.Agents(r.Context(), caller(r), project(r))
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
	at, err := s.auth.CreateAgent(r.Context(), caller(r), project(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, at)
}

func (s *Server) handleAgentToken(w http.ResponseWriter, r *http.Request) error {
	at, err := s.auth.RotateAgentToken(r.Context(), caller(r), project(r), r.PathValue("agent"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, at)
}

func (s *Server) handleRevokeAgent(w http.ResponseWriter, r *http.Request) error {
	a, err := s.auth.RevokeAgent(r.Context(), caller(r), project(r), r.PathValue("agent"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, a)
}
