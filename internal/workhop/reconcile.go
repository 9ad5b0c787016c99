package workhop

import (
	"errors"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
)

// handleReconcile settles an Operation that needs a person, for a member authenticated
// by a bearer session token (DESIGN.md §6.4). The answer is the Operation's strip entry.
func (s *Server) handleReconcile(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		s.apiError(w, r, contract.Errorf(contract.CodeUnauthenticated, "reconcile needs Authorization: Bearer <member token>; docket init prints one."))
		return
	}
	c, err := s.auth.Authenticate(ctx, authority.Token(tok))
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	body, err := readBody(w, r, 64<<10)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	var in contract.ReconcileRequest
	if err := contract.DecodeStrict(body, &in); err != nil {
		s.apiError(w, r, contract.Errorf(contract.CodeInvalidArgument, "the body is not {\"outcome\": \"done|failed|unknown\", \"reason\": …}; send that."))
		return
	}
	entry, err := s.disp.Reconcile(ctx, c, contract.ProjectID(r.PathValue("project")), r.PathValue("op"), in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, entry)
}

// apiError answers err as the console API does: {"errorCode", "teaching"}.
func (s *Server) apiError(w http.ResponseWriter, r *http.Request, err error) {
	ce, ok := errors.AsType[*contract.Error](err)
	if !ok {
		s.log.ErrorContext(r.Context(), "reconcile failed", logErr, err)
		ce = contract.Errorf(contract.CodeInternal, "the authority failed to reconcile; its log has the cause.")
	}
	writeJSON(w, contract.HTTPStatus(ce.Code), contract.Error{Code: ce.Code, Teaching: ce.Teaching})
}
