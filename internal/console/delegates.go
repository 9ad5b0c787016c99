package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/contract"
)

// delegateBackend is the part of the authority the delegate routes need.
type delegateBackend interface {
	CreateDelegate(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.CreateDelegateRequest) (contract.DelegateToken, error)
	Delegates(ctx context.Context, c identity.Caller) ([]contract.Delegate, error)
	RevokeDelegate(ctx context.Context, c identity.Caller, delegate string) (contract.Delegate, error)
}

// decideOperation is the consent operation a delegate runs itself when the delegation
// policy covers the Request.
const decideOperation = "request.decide"

// delegateGate is what a delegate may call: any read of /api/v1, which the
// authority's own checks bound to the delegate's one project, and a changing route by its
// class in the one table: operational runs as the delegate, consent records a card and
// runs nothing (unless the delegate policy in force exempts it), member-only is refused.
// A member acting itself passes. done is true when the gate answered the request.
func (s *Server) delegateGate(w http.ResponseWriter, r *http.Request, pattern string) (done bool, err error) {
	c := caller(r)
	if !c.IsDelegate() || safeMethod(r.Method) {
		return false, nil
	}
	op := opclass.ForRoute(pattern)
	switch op.Class {
	case opclass.Operational:
		return false, nil
	case opclass.Consent:
		if op.Name == decideOperation {
			// Deciding a Request the delegation policy in force covers is operational: the
			// delegate decides it as itself, checked again under the decision's locks.
			covered, err := s.dec.DelegateCovers(r.Context(), c, project(r), contract.RequestID(r.PathValue("id")))
			if err != nil || covered {
				return err != nil, err
			}
		}
		return s.propose(w, r, op)
	}
	return true, contract.Errorf(contract.CodeMemberOnly, "only member %s may do %s, not its delegate %s; docket operation list shows what a delegate may do.", c.Name, op.Name, c.Delegate)
}

func (s *Server) handleCreateDelegate(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.CreateDelegateRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	dt, err := s.ids.CreateDelegate(r.Context(), caller(r), project(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, dt)
}

func (s *Server) handleDelegates(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.ids.Delegates(r.Context(), caller(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, ds, func(d contract.Delegate) string { return d.ID })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleRevokeDelegate(w http.ResponseWriter, r *http.Request) error {
	d, err := s.ids.RevokeDelegate(r.Context(), caller(r), r.PathValue("delegate"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}
