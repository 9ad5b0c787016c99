package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// noticesBody is what the Notices page shows: the member's subscriptions with their last
// delivery, and the form that adds one.
type noticesBody struct {
	Subscriptions []contract.NoticeSubscription
	Kinds         []string // every notice kind, for the form
	Form          noticeForm
	Error         string // why the form was refused
}

// noticeForm is the subscribe form's fields, kept after a refusal; the webhook URL is
// not kept, since it may be a credential.
type noticeForm struct {
	Kinds   []string
	Channel string // "webhook" or "email"
	Email   string
	Digest  string
}

// Has reports whether the form had kind ticked.
func (f noticeForm) Has(kind string) bool {
	for _, k := range f.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// noticePageEvents bring the Notices page up to date.
var noticePageEvents = []string{event.NoticeDelivered, event.NoticeFailed}

func (s *Server) noticePages() {
	s.page("GET /projects/{project}/notices", "notices", s.pageNotices)
	s.page("POST /projects/{project}/notices", "notices", s.pageSubscribe)
	s.page("POST /projects/{project}/notices/{subscription}/{act}", "notices", s.pageNoticeAct)
}

func (s *Server) pageNotices(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showNotices(w, r, v, http.StatusOK, noticesBody{Form: noticeForm{Channel: "webhook", Kinds: []string{contract.NoticeRequest, contract.NoticeCard}}})
}

func (s *Server) showNotices(w http.ResponseWriter, r *http.Request, v visit, status int, b noticesBody) error {
	if s.notices == nil {
		return contract.Errorf(contract.CodeNotFound, "this server sends no notices.")
	}
	ss, err := s.notices.Subscriptions(r.Context(), v.caller, v.project)
	if err != nil {
		return err
	}
	b.Subscriptions, b.Kinds = ss, contract.NoticeKinds
	return s.render(w, r, v, status, "notices", b, noticePageEvents...)
}

// pageSubscribe adds a subscription from the form; a refused one is shown again with the
// teaching that names its field.
func (s *Server) pageSubscribe(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.notices == nil {
		return contract.Errorf(contract.CodeNotFound, "this server sends no notices.")
	}
	if err := r.ParseForm(); err != nil {
		return contract.Errorf(contract.CodeInvalidArgument, "the form did not arrive whole; send it again.")
	}
	f := noticeForm{Kinds: r.PostForm["kind"], Channel: r.PostFormValue("channel"), Email: strings.TrimSpace(r.PostFormValue("email")),
		Digest: strings.TrimSpace(r.PostFormValue("digest"))}
	req := contract.SubscribeNoticesRequest{Kinds: f.Kinds, Digest: f.Digest}
	if f.Channel == "email" {
		req.Email = f.Email
	} else {
		req.Webhook = strings.TrimSpace(r.PostFormValue("webhook"))
	}
	if _, err := s.notices.Subscribe(r.Context(), v.caller, v.project, req); err != nil {
		msg, status, err := shownRefusal(err)
		if err != nil {
			return err
		}
		return s.showNotices(w, r, v, status, noticesBody{Form: f, Error: msg})
	}
	s.backToNotices(w, r, v, noticeSubscribed)
	return nil
}

// pageNoticeAct unsubscribes or sends a test notice.
func (s *Server) pageNoticeAct(w http.ResponseWriter, r *http.Request, v visit) error {
	if s.notices == nil {
		return contract.Errorf(contract.CodeNotFound, "this server sends no notices.")
	}
	ctx, id := r.Context(), r.PathValue("subscription")
	switch r.PathValue("act") {
	case "unsubscribe":
		if _, err := s.notices.Unsubscribe(ctx, v.caller, v.project, id); err != nil {
			return err
		}
		s.backToNotices(w, r, v, noticeUnsubscribed)
	case "test":
		if _, err := s.notices.Test(ctx, v.caller, v.project, id); err != nil {
			return err
		}
		s.backToNotices(w, r, v, noticeTestQueued)
	default:
		return contract.Errorf(contract.CodeNotFound, "a subscription is unsubscribed or tested; %q is neither.", r.PathValue("act"))
	}
	return nil
}

func (s *Server) backToNotices(w http.ResponseWriter, r *http.Request, v visit, n notice) {
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(v.project))+"/notices?"+withNotice(nil, n), http.StatusSeeOther)
}
