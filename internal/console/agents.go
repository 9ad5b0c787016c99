package console

import (
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

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
