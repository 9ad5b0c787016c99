package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// capabilityBackend is the part of the authority the capability routes need.
type capabilityBackend interface {
	Installs(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Release, error)
	InstallCapability(ctx context.Context, c identity.Caller, project contract.ProjectID, up contract.CapabilityUpload) (contract.Installed, error)
}

func (s *Server) handleInstalls(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.auth.Installs(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, rs, func(r contract.Release) string { return r.ID })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleInstallCapability installs an uploaded package; its body may be larger than other
// requests', up to MaxUpload.
func (s *Server) handleInstallCapability(w http.ResponseWriter, r *http.Request) error {
	up, err := decodeJSON[contract.CapabilityUpload](w, r, s.maxUpload)
	if err != nil {
		return err
	}
	in, err := s.auth.InstallCapability(r.Context(), caller(r), project(r), up)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if in.Created {
		status = http.StatusCreated
	}
	return writeJSON(w, status, in)
}
