package console

import (
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// maxAutonomyBody bounds a level or window body in bytes: a level and the acknowledgement
// text a member read.
const maxAutonomyBody = 16 << 10

// Shapes of the autonomy bodies, to teach.
const (
	levelShape  = `send one JSON object {"level": "manual"|"attended"|"unattended", "acknowledgement": "<the policy's text, when raising to unattended requires it>"}`
	windowShape = `send one JSON object {"minutes": 60}`
)

// handleAutonomy returns an Agent's level and open run windows.
func (s *Server) handleAutonomy(w http.ResponseWriter, r *http.Request) error {
	a, err := s.pol.AgentAutonomy(r.Context(), caller(r), project(r), r.PathValue("agent"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, a)
}

// handleSetLevel sets an Agent's autonomy level, for a member.
func (s *Server) handleSetLevel(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.SetLevelRequest](w, r, maxAutonomyBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: levelShape, Err: err}
	}
	if err != nil {
		return err
	}
	a, err := s.pol.SetAgentLevel(r.Context(), caller(r), project(r), r.PathValue("agent"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, a)
}

// handleOpenWindow opens a run window of an Agent, for a member.
func (s *Server) handleOpenWindow(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.OpenWindowRequest](w, r, maxAutonomyBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: windowShape, Err: err}
	}
	if err != nil {
		return err
	}
	a, err := s.pol.OpenRunWindow(r.Context(), caller(r), project(r), r.PathValue("agent"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, a)
}
