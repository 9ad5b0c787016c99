package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// recoverer is the part of the Operations the console needs for a member's recovery act.
// It must be the Operations that serve /mcp, so the held calls see the retry.
type recoverer interface {
	Retry(ctx context.Context, c identity.Caller, project contract.ProjectID, ref string, req contract.RetryRequest) (contract.RecoveryOutcome, error)
}

// maxRetryBody bounds a retry's body in bytes: a reason.
const maxRetryBody = 16 << 10

// retryShape teaches the body of a retry.
const retryShape = `send one JSON object {"reason": "why the Operation should run again"}`

// recoveryRoutes adds the recovery route when the server has a recoverer.
func (s *Server) recoveryRoutes() {
	if s.recov == nil {
		return
	}
	s.handle("POST /api/v1/projects/{project}/operations/{op}/retry", s.handleRetry, authed)
}

// handleRetry retries a failed Operation, for a member.
func (s *Server) handleRetry(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeJSON[contract.RetryRequest](w, r, maxRetryBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: retryShape, Err: err}
	}
	if err != nil {
		return err
	}
	out, err := s.recov.Retry(r.Context(), caller(r), project(r), r.PathValue("op"), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, out)
}
