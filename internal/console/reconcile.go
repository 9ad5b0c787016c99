package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// reconciler is the part of the Dispatcher the console needs to settle an Operation that
// needs a person.
type reconciler interface {
	Reconcile(ctx context.Context, c identity.Caller, project contract.ProjectID, work string, req contract.ReconcileRequest) (contract.OperationEntry, error)
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
