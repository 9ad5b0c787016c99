package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
)

// workerBackend is the part of the authority the workers route needs.
type workerBackend interface {
	Workers(ctx context.Context, c authority.Caller, project contract.ProjectID) ([]contract.WorkerStatus, error)
}

// handleWorkers lists a project's live Connections with their lease, Tools and Sources.
func (s *Server) handleWorkers(w http.ResponseWriter, r *http.Request) error {
	ws, err := s.auth.Workers(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, ws, func(st contract.WorkerStatus) string { return string(st.Connection.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}
