package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// caseBackend is the part of the authority the case routes need.
type caseBackend interface {
	Cases(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.Case, error)
	Case(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID) (contract.Case, error)
	CaseDetail(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID) (contract.CaseDetail, error)
	HoldCase(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID, reason string) (contract.Case, error)
	ResumeCase(ctx context.Context, c identity.Caller, project contract.ProjectID, id contract.CaseID, holdID string) (contract.Case, error)
}

// handlePauseCase places a member's hold on a Case (docs/console.md#pausing-a-case).
func (s *Server) handlePauseCase(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.PauseRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	c, err := s.auth.HoldCase(r.Context(), caller(r), project(r), contract.CaseID(r.PathValue("case")), req.Reason)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}

// handleResumeCase releases a member's hold on a Case, or every member's hold.
func (s *Server) handleResumeCase(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.ResumeRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	c, err := s.auth.ResumeCase(r.Context(), caller(r), project(r), contract.CaseID(r.PathValue("case")), req.Hold)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}

func (s *Server) handleCases(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.auth.Cases(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, cs, func(c contract.Case) string { return string(c.CaseID) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleCase returns one Case with its receipt, its acceptance and that node's derivation
// tree, and the facts it rests on.
func (s *Server) handleCase(w http.ResponseWriter, r *http.Request) error {
	c, err := s.auth.CaseDetail(r.Context(), caller(r), project(r), contract.CaseID(r.PathValue("case")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}
