package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// noticeBook is the part of the authority the notice routes need; *notice.Keeper is
// one.
type noticeBook interface {
	Subscribe(ctx context.Context, c identity.Caller, project contract.ProjectID, req contract.SubscribeNoticesRequest) (contract.NoticeSubscription, error)
	Subscriptions(ctx context.Context, c identity.Caller, project contract.ProjectID) ([]contract.NoticeSubscription, error)
	Unsubscribe(ctx context.Context, c identity.Caller, project contract.ProjectID, id string) (contract.NoticeSubscription, error)
	Test(ctx context.Context, c identity.Caller, project contract.ProjectID, id string) (contract.NoticeTest, error)
}

// errNoNotices answers the notice routes of a server that keeps no notices.
var errNoNotices = contract.Errorf(contract.CodeNotFound, "this server sends no notices.")

// noticeShape teaches the body of a new subscription.
const noticeShape = `send one JSON object {"kinds": ["request", "card"], "webhook": "https://…" or "email": "ann@example.com", "digest": "15m"}; docket notice subscribe does`

// noticeRoutes adds the notice routes. They are there when the server keeps no notices
// too, so that the delegate gate refuses a delegate alike; a member is then told that
// this server sends none.
func (s *Server) noticeRoutes() {
	s.handle("GET /api/v1/projects/{project}/notices", s.handleNotices, authed)
	s.handle("POST /api/v1/projects/{project}/notices", s.handleSubscribe, authed)
	s.handle("DELETE /api/v1/projects/{project}/notices/{subscription}", s.handleUnsubscribe, authed)
	s.handle("POST /api/v1/projects/{project}/notices/{subscription}/test", s.handleTestNotice, authed)
}

func (s *Server) handleNotices(w http.ResponseWriter, r *http.Request) error {
	if s.notices == nil {
		return errNoNotices
	}
	ss, err := s.notices.Subscriptions(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	page, err := paginate(r, ss, func(x contract.NoticeSubscription) string { return x.ID })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// handleSubscribe records a subscription; a body that does not decode is refused with
// the shape to send.
func (s *Server) handleSubscribe(w http.ResponseWriter, r *http.Request) error {
	if s.notices == nil {
		return errNoNotices
	}
	req, err := decodeJSON[contract.SubscribeNoticesRequest](w, r, s.maxBody)
	if contract.CodeOf(err) == contract.CodeInvalidArgument {
		return &contract.Error{Code: contract.CodeInvalidArgument, Teaching: noticeShape, Err: err}
	}
	if err != nil {
		return err
	}
	sub, err := s.notices.Subscribe(r.Context(), caller(r), project(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, sub)
}

func (s *Server) handleUnsubscribe(w http.ResponseWriter, r *http.Request) error {
	if s.notices == nil {
		return errNoNotices
	}
	sub, err := s.notices.Unsubscribe(r.Context(), caller(r), project(r), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sub)
}

func (s *Server) handleTestNotice(w http.ResponseWriter, r *http.Request) error {
	if s.notices == nil {
		return errNoNotices
	}
	tn, err := s.notices.Test(r.Context(), caller(r), project(r), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, tn)
}
