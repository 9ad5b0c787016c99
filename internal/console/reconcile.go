package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
)

// reconciler is the part of the Dispatcher the console needs to settle an Operation that
// needs a person, and to list the work that waits for a worker.
type reconciler interface {
	Reconcile(ctx context.Context, c authority.Caller, project contract.ProjectID, work string, req contract.ReconcileRequest) (contract.OperationEntry, error)
	Waiting(ctx context.Context, c authority.Caller, project contract.ProjectID) ([]contract.WaitingWork, error)
}

// maxReconcileBody bounds a reconciliation's body in bytes: an outcome and a reason.
const maxReconcileBody = 64 << 10

// reconcileShape teaches the body of a reconciliation.
const reconcileShape = `the body is not {"outcome": "done|failed|unknown", "reason": …}; send that.`

// handleReconcile settles an Operation that needs a person: a worker died, or its report
// was lost, and a member says what happened. The answer is the Operation's strip entry.
func (s *Server) handleReconcile(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.ReconcileRequest](w, r, maxReconcileBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: reconcileShape, Err: err}
	}
	if err != nil {
		return err
	}
	entry, err := s.rec.Reconcile(r.Context(), caller(r), project(r), r.PathValue("op"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, entry)
}

// handleWaiting lists the project's work that waits for a worker, each with why once the
// authority knows (reason, reasonCode); docket doctor reads it.
func (s *Server) handleWaiting(w http.ResponseWriter, r *http.Request) error {
	ws, err := s.rec.Waiting(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"waiting": ws})
}
