package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// workerBackend is the part of the authority the workers route needs.
type workerBackend interface {
	Workers(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.WorkerStatus, error)
	ReportWorkerRuntime(ctx context.Context, c identity.Caller, project contract.ProjectID, connection string, st contract.RuntimeStatus) (contract.RuntimeStatus, error)
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

// handleReportWorker records the state of the worker docket start runs for a Connection,
// as docket start reports it, so that the Workers page and docket doctor name a worker
// that keeps exiting (docs/workbench.md).
func (s *Server) handleReportWorker(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.RuntimeStatus](w, r, maxProfileBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: runtimeShape, Err: err}
	}
	if err != nil {
		return err
	}
	st, err := s.auth.ReportWorkerRuntime(r.Context(), caller(r), project(r), r.PathValue("connection"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}
