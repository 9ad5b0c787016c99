package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// delegatesBody is what the Delegates page shows: the member's delegates in the project,
// each with its cards, and the credential just made when the page answers a create.
type delegatesBody struct {
	Delegates []delegateRow // newest first, at most maxRowsShown
	Pager     pager
	Issued    *contract.DelegateToken // shown on this one answer only, never stored or sent again
	Name      string                  // the name typed into the create form, kept after a refusal
	Life      string
	Error     string // why the create form was refused
}

// maxCardsShown bounds the cards shown under each delegate, newest first: a delegate
// makes cards as it works, each closed one kept (docs/security.md, "Bounds"); docket card
// list reads them all.
const maxCardsShown = 20

// delegateRow is one delegate with its newest cards, and how many older ones are not shown.
type delegateRow struct {
	contract.Delegate
	Cards      []contract.Card
	OlderCards int
}

// pageDelegates lists the member's delegates in the project with their cards, and the
// form that makes one.
func (s *Server) pageDelegates(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showDelegates(w, r, v, http.StatusOK, delegatesBody{Life: "8h"})
}

func (s *Server) showDelegates(w http.ResponseWriter, r *http.Request, v visit, status int, b delegatesBody) error {
	ctx := r.Context()
	ds, err := s.ids.Delegates(ctx, v.caller)
	if err != nil {
		return err
	}
	cards := map[string][]contract.Card{}
	if s.cards != nil {
		cs, err := s.ids.Cards(ctx, v.caller, v.project, "")
		if err != nil {
			return err
		}
		for i := len(cs) - 1; i >= 0; i-- {
			cards[cs[i].Delegate] = append(cards[cs[i].Delegate], cs[i])
		}
	}
	ds = slices.DeleteFunc(ds, func(d contract.Delegate) bool { return d.Project != v.project })
	ds = newestFirst(ds, func(d contract.Delegate) (time.Time, string) { return d.CreatedAt, d.ID })
	list := listPage{Path: "/projects/" + url.PathEscape(string(v.project)) + "/delegates", Param: "after", What: "delegates"}
	ds, b.Pager, err = pageOf(r.URL.Query(), list, ds, func(d contract.Delegate) string { return d.ID }, maxRowsShown)
	if err != nil {
		return err
	}
	for _, d := range ds {
		cs := cards[d.ID]
		row := delegateRow{Delegate: d, Cards: cs[:min(len(cs), maxCardsShown)], OlderCards: max(len(cs)-maxCardsShown, 0)}
		b.Delegates = append(b.Delegates, row)
	}
	return s.render(w, r, v, status, "delegates", b, cardEvents...)
}

// pageCreateDelegate makes a delegate and answers with the Delegates page showing its
// credential, this once: it is in this answer's body alone, never in a URL, a log or an
// event.
func (s *Server) pageCreateDelegate(w http.ResponseWriter, r *http.Request, v visit) error {
	name, life := strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("life"))
	dt, err := s.ids.CreateDelegate(r.Context(), v.caller, v.project, contract.CreateDelegateRequest{Name: name, Life: life})
	if err != nil {
		if ce, ok := errors.AsType[*contract.Error](err); ok && httpStatus(ce.Code) < http.StatusInternalServerError {
			return s.showDelegates(w, r, v, httpStatus(ce.Code), delegatesBody{Name: name, Life: life, Error: ce.Teaching})
		}
		return err
	}
	return s.showDelegates(w, r, v, http.StatusCreated, delegatesBody{Issued: &dt, Life: "8h"})
}

// pageRevokeDelegate revokes a delegate: its credential stops at once and its open cards
// are void.
func (s *Server) pageRevokeDelegate(w http.ResponseWriter, r *http.Request, v visit) error {
	_, err := s.ids.RevokeDelegate(r.Context(), v.caller, r.PathValue("delegate"))
	if err != nil {
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/delegates", noticeDelegateRevoked)
}
