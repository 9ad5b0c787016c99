package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// decider is the part of the Operations the console needs to list and decide Requests.
// It must be the Operations that hold calls at /mcp, so that a decision wakes the call
// that waits for it.
type decider interface {
	Requests(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Request, error)
	Decide(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.RequestID, d contract.Decision) (contract.Request, error)
	DelegateCovers(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.RequestID) (bool, error)
}

// maxDecisionBody bounds a decision's body in bytes: a digest, a verdict and a reason.
const maxDecisionBody = 16 << 10

// decisionShape teaches the body of a decision.
const decisionShape = `send one JSON object {"digest": "sha256:…", "verdict": "approve"|"deny", "reason": "…"}`

// handleRequests lists a project's Requests with their canonical arguments and digest,
// for a member to read before deciding.
func (s *Server) handleRequests(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.dec.Requests(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, rs, func(q contract.Request) string { return string(q.ID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleDecide decides one Request. A body that does not decode is refused with
// invalid_argument and the shape to send, whatever was wrong with it, its size included.
func (s *Server) handleDecide(w http.ResponseWriter, r *http.Request) error {
	d, err := decodeJSON[contract.Decision](w, r, maxDecisionBody)
	if err != nil {
		if contract.CodeOf(err) == contract.CodeUnsupportedMedia {
			return err
		}
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: decisionShape, Err: err}
	}
	got, err := s.dec.Decide(r.Context(), caller(r), project(r), contract.RequestID(r.PathValue("id")), d)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, got)
}
