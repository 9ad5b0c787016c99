package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// blueprintBackend is the part of the authority the blueprint routes need.
type blueprintBackend interface {
	Blueprints(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Blueprint, error)
	Blueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) (contract.Blueprint, error)
	SetBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string, spec contract.BlueprintSpec) (contract.Blueprint, error)
	RemoveBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, name string) error
	SetAgentProfileFromBlueprint(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, from contract.FromBlueprint) (contract.AgentProfile, error)
}

// Shapes of the blueprint bodies, to teach.
const (
	blueprintShape     = `send one JSON object {"description", "profile": {"provider", "modelUrl", "model", "script", "instructionsFile", "instructionsDigest", "workspace", "thinking", "contextWindow", "maxTurns", "maxTokens", "maxUsd", "modelAttempts", "modelRetryWaitSeconds", "modelFirstByteSeconds", "modelIdleSeconds", "allow": {"caseTypes": [...], "actions": [...]}}}; no keyFile and no enabled, which are each Agent's own`
	fromBlueprintShape = `send one JSON object {"blueprint": "<name>", "digest": "sha256:<64 hex>" (optional: the digest you read), "keyFile", "enabled"}`
)

// blueprintRoutes adds the blueprint routes (docs/agents.md, "Blueprints").
func (s *Server) blueprintRoutes() {
	s.handle("GET /api/v1/projects/{project}/blueprints", s.handleBlueprints, authed)
	s.handle("GET /api/v1/projects/{project}/blueprints/{blueprint}", s.handleBlueprint, authed)
	s.handle("PUT /api/v1/projects/{project}/blueprints/{blueprint}", s.handleSetBlueprint, authed)
	s.handle("DELETE /api/v1/projects/{project}/blueprints/{blueprint}", s.handleRemoveBlueprint, authed)
	s.handle("POST /api/v1/projects/{project}/agents/{agent}/profile/from-blueprint", s.handleProfileFromBlueprint, authed)
}

// handleBlueprints lists the project's blueprints.
func (s *Server) handleBlueprints(w http.ResponseWriter, r *http.Request) error {
	bs, err := s.auth.Blueprints(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, bs, func(b contract.Blueprint) string { return b.Name })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleBlueprint returns one blueprint.
func (s *Server) handleBlueprint(w http.ResponseWriter, r *http.Request) error {
	b, err := s.auth.Blueprint(r.Context(), caller(r), project(r), r.PathValue("blueprint"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, b)
}

// handleSetBlueprint sets a blueprint, for a member.
func (s *Server) handleSetBlueprint(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.BlueprintSpec](w, r, maxProfileBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: blueprintShape, Err: err}
	}
	if err != nil {
		return err
	}
	b, err := s.auth.SetBlueprint(r.Context(), caller(r), project(r), r.PathValue("blueprint"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, b)
}

// handleRemoveBlueprint removes a blueprint, for a member.
func (s *Server) handleRemoveBlueprint(w http.ResponseWriter, r *http.Request) error {
	if err := s.auth.RemoveBlueprint(r.Context(), caller(r), project(r), r.PathValue("blueprint")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleProfileFromBlueprint sets an Agent's profile to a copy of a blueprint, for a
// member.
func (s *Server) handleProfileFromBlueprint(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.FromBlueprint](w, r, maxProfileBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: fromBlueprintShape, Err: err}
	}
	if err != nil {
		return err
	}
	p, err := s.auth.SetAgentProfileFromBlueprint(r.Context(), caller(r), project(r), r.PathValue("agent"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}
