package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// projectBackend is the part of the authority the member and project routes need.
type projectBackend interface {
	CreateMember(ctx context.Context, c identity.Caller, req contract.CreateMemberRequest) (contract.Member, error)
	Projects(ctx context.Context, c identity.Caller) ([]contract.Project, error)
	CreateProject(ctx context.Context, c identity.Caller, req contract.CreateProjectRequest) (contract.Project, error)
}

func (s *Server) handleCreateMember(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.CreateMemberRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	m, err := s.ids.CreateMember(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, m)
}

func (s *Server) handleProjects(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.ids.Projects(r.Context(), caller(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, ps, func(p contract.Project) string { return string(p.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleCreateProject(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.CreateProjectRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	p, err := s.ids.CreateProject(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, p)
}

// project returns the {project} path value.
func project(r *http.Request) contract.ProjectID { return contract.ProjectID(r.PathValue("project")) }
