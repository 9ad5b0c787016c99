package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// profileBackend is the part of the authority the profile routes need.
type profileBackend interface {
	AgentProfile(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) (contract.AgentProfile, error)
	AgentProfiles(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.AgentProfile, error)
	SetAgentProfile(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, spec contract.ProfileSpec) (contract.AgentProfile, error)
	ReportAgentRuntime(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, st contract.RuntimeStatus) (contract.AgentProfile, error)
}

// maxProfileBody bounds a profile or runtime report body in bytes: a few bounded lines.
const maxProfileBody = 16 << 10

// Shapes of the profile bodies, to teach.
const (
	profileShape = `send one JSON object {"provider": "openai"|"anthropic"|"emulated"|"scripted", "modelUrl", "model", "keyFile", "script", "maxTurns", "maxTokens", "maxUsd", "instructionsFile", "instructionsDigest", "thinking": "on"|"off", "modelAttempts", "modelRetryWaitSeconds", "modelFirstByteSeconds", "modelIdleSeconds", "enabled"}; the model key itself never goes to the authority`
	runtimeShape = `send one JSON object {"state": "starting"|"running"|"restarting"|"failed"|"stopped"|"crash_loop", "pid", "restarts", "reason"}`
)

// profileRoutes adds the profile routes.
func (s *Server) profileRoutes() {
	s.handle("GET /api/v1/projects/{project}/profiles", s.handleProfiles, authed)
	s.handle("GET /api/v1/projects/{project}/agents/{agent}/profile", s.handleProfile, authed)
	s.handle("PUT /api/v1/projects/{project}/agents/{agent}/profile", s.handleSetProfile, authed)
	s.handle("PUT /api/v1/projects/{project}/agents/{agent}/runtime", s.handleReportRuntime, authed)
}

// handleProfiles lists the profiles of the project's live Agents.
func (s *Server) handleProfiles(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.auth.AgentProfiles(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, ps, func(p contract.AgentProfile) string { return string(p.Agent) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleProfile returns one Agent's profile.
func (s *Server) handleProfile(w http.ResponseWriter, r *http.Request) error {
	p, err := s.auth.AgentProfile(r.Context(), caller(r), project(r), r.PathValue("agent"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}

// handleSetProfile replaces an Agent's profile, for a member.
func (s *Server) handleSetProfile(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.ProfileSpec](w, r, maxProfileBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: profileShape, Err: err}
	}
	if err != nil {
		return err
	}
	p, err := s.auth.SetAgentProfile(r.Context(), caller(r), project(r), r.PathValue("agent"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}

// handleReportRuntime records the state of an Agent's runtime, as docket start reports it.
func (s *Server) handleReportRuntime(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.RuntimeStatus](w, r, maxProfileBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: runtimeShape, Err: err}
	}
	if err != nil {
		return err
	}
	p, err := s.auth.ReportAgentRuntime(r.Context(), caller(r), project(r), r.PathValue("agent"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}
