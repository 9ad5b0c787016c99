package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// whyBackend is the part of the authority the "why" route needs.
type whyBackend interface {
	Why(ctx context.Context, c identity.Caller, project contract.ProjectID, node string) (contract.Why, error)
}

// handleWhy returns the derivation tree of one Board node.
func (s *Server) handleWhy(w http.ResponseWriter, r *http.Request) error {
	why, err := s.auth.Why(r.Context(), caller(r), project(r), r.PathValue("node"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, why)
}
