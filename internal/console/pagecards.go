package console

import (
	"context"
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// Event types of cards: a page that shows cards is brought up to date when
// one arrives.
var cardEvents = []string{event.CardRecorded, event.CardConfirmed, event.CardRan, event.CardDeclined, event.CardVoided}

// cardsBody is the cards part of Needs you: the open cards of delegates, which a member
// confirms or declines, and the answer of a confirm just made, shown this once.
type cardsBody struct {
	Open      []contract.Card
	Confirmed *cardConfirmed
	book      nameBook // who proposed each card, by name
}

// Who is p, who proposed a card, as the page shows it.
func (c cardsBody) Who(p contract.Principal) who { return c.book.who(p) }

// cardConfirmed is a confirmed card with the answer its call gave, shown once: it may
// hold a token the card never kept.
type cardConfirmed struct {
	Card   contract.Card
	Result string
}

// openCards lists the project's open cards for Needs you; none without a card keeper.
func (s *Server) openCards(ctx context.Context, v visit) ([]contract.Card, error) {
	if s.cards == nil {
		return nil, nil
	}
	return s.ids.Cards(ctx, v.caller, v.project, contract.CardOpen)
}

// pageConfirmCard confirms a card from Needs you: its call runs once, as the member, and
// Needs you answers with the call's answer shown this once (never in a URL).
func (s *Server) pageConfirmCard(w http.ResponseWriter, r *http.Request, v visit) error {
	r = r.WithContext(withCaller(r.Context(), v.caller, v.token))
	conf, err := s.confirmCard(r, r.PathValue("card"))
	if err != nil {
		return err
	}
	return s.showNeeds(w, r, v, http.StatusOK, &cardConfirmed{Card: conf.Card, Result: string(conf.Result)})
}

// pageDeclineCard declines a card from Needs you; its call never runs.
func (s *Server) pageDeclineCard(w http.ResponseWriter, r *http.Request, v visit) error {
	_, err := s.ids.DeclineCard(r.Context(), v.caller, r.PathValue("card"), contract.DeclineCardRequest{Reason: r.PostFormValue("reason")})
	if err != nil {
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/needs", noticeCardDeclined)
}

// pageNeedsAgain sends a GET of the address a confirm answered at — a live page bringing
// itself up to date, or the address typed again — to Needs you, which shows no answer.
func (s *Server) pageNeedsAgain(w http.ResponseWriter, r *http.Request, v visit) error {
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(v.project))+"/needs", http.StatusSeeOther)
	return nil
}
