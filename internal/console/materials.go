package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// materialBackend is the part of the authority the material routes need.
type materialBackend interface {
	Materials(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Material, error)
	Material(ctx context.Context, c identity.Caller, project contract.ProjectID, agent, sha256 string) (contract.Material, error)
	AddMaterial(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, in contract.MaterialAdd) (contract.Material, error)
	SetMaterialDisclosure(ctx context.Context, c identity.Caller, project contract.ProjectID, agent, sha256 string, allowed bool) (contract.Material, error)
}

// maxMaterialBody bounds a material's fact or disclosure body: metadata, never bytes.
const maxMaterialBody = 4 << 10

const (
	materialShape   = `send one JSON object {"conversation", "name", "size", "mediaType", "sha256"}: the file's metadata; its bytes stay on the machine docket start runs on (docket material add)`
	disclosureShape = `send one JSON object {"allowed": true|false}`
)

// materialRoutes adds the material routes (docs/materials.md).
func (s *Server) materialRoutes() {
	s.handle("GET /api/v1/projects/{project}/materials", s.handleMaterials, authed)
	s.handle("GET /api/v1/projects/{project}/agents/{agent}/materials", s.handleMaterials, authed)
	s.handle("POST /api/v1/projects/{project}/agents/{agent}/materials", s.handleAddMaterial, authed)
	s.handle("GET /api/v1/projects/{project}/agents/{agent}/materials/{sha256}", s.handleMaterial, authed)
	s.handle("PUT /api/v1/projects/{project}/agents/{agent}/materials/{sha256}/disclosure", s.handleMaterialDisclosure, authed)
	s.handle("GET /api/v1/materials/{sha256}", s.handleOwnMaterial, authed)
}

// handleOwnMaterial returns one of the calling Agent's materials: its runtime asks it
// before each model request that would carry the material's text.
func (s *Server) handleOwnMaterial(w http.ResponseWriter, r *http.Request) error {
	c := caller(r)
	if c.Kind != contract.PrincipalAgent || len(c.Projects) != 1 {
		return contract.Errorf(contract.CodeForbidden, "this route answers an Agent about its own materials; a member reads them at /api/v1/projects/P/agents/A/materials.")
	}
	m, err := s.auth.Material(r.Context(), c, c.Projects[0], c.ID, r.PathValue("sha256"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

func (s *Server) handleMaterials(w http.ResponseWriter, r *http.Request) error {
	ms, err := s.auth.Materials(r.Context(), caller(r), project(r), r.PathValue("agent"))
	if err != nil {
		return err
	}
	page, err := paginate(r, ms, func(m contract.Material) string { return string(m.Agent) + "/" + m.SHA256 })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleMaterial(w http.ResponseWriter, r *http.Request) error {
	m, err := s.auth.Material(r.Context(), caller(r), project(r), r.PathValue("agent"), r.PathValue("sha256"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

func (s *Server) handleAddMaterial(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.MaterialAdd](w, r, maxMaterialBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: materialShape, Err: err}
	}
	if err != nil {
		return err
	}
	m, err := s.auth.AddMaterial(r.Context(), caller(r), project(r), r.PathValue("agent"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, m)
}

func (s *Server) handleMaterialDisclosure(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.MaterialDisclosure](w, r, maxMaterialBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: disclosureShape, Err: err}
	}
	if err != nil {
		return err
	}
	m, err := s.auth.SetMaterialDisclosure(r.Context(), caller(r), project(r), r.PathValue("agent"), r.PathValue("sha256"), in.Allowed)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}
