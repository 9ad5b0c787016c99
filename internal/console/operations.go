package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// operationLister is the part of the Operations the operations list needs.
type operationLister interface {
	OperationList(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, waiting bool) ([]contract.OperationInfo, error)
}

// handleOperations lists a project's Operations with where each stands and why:
// ?agent= (an id or a name) keeps one Agent's, ?waiting=1 only those waiting for a
// worker, a decision or a person.
func (s *Server) handleOperations(w http.ResponseWriter, r *http.Request) error {
	waiting, err := queryFlag(r, "waiting")
	if err != nil {
		return err
	}
	ops, err := s.opl.OperationList(r.Context(), caller(r), project(r), r.URL.Query().Get("agent"), waiting)
	if err != nil {
		return err
	}
	page, err := paginate(r, ops, func(o contract.OperationInfo) string { return o.Work })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// queryFlag reads a boolean query parameter: absent, 0 or false is false; 1 or true is
// true; anything else is refused.
func queryFlag(r *http.Request, name string) (bool, error) {
	switch v := r.URL.Query().Get(name); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, contract.Errorf(contract.CodeInvalidArgument, "query parameter %s=%q is not 1, true, 0 or false.", name, v)
	}
}
