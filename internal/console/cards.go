package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/contract"
)

// carder records and confirms cards. It must be the *authority.Operations that
// serves /mcp, whose Requests a card of a decision is bound to.
type carder interface {
	Propose(ctx context.Context, c identity.Caller, project contract.ProjectID, call authority.ConsentCall) (*contract.Card, error)
	ConfirmCard(ctx context.Context, c identity.Caller, id string) (contract.Card, error)
}

// cardBackend is the part of the authority the card routes read and close cards through.
type cardBackend interface {
	Cards(ctx context.Context, c identity.Caller, project contract.ProjectID, state contract.CardState) ([]contract.Card, error)
	Card(ctx context.Context, c identity.Caller, id string) (contract.Card, error)
	SettleCard(ctx context.Context, c identity.Caller, id string, out contract.CardOutcome) (contract.Card, error)
	DeclineCard(ctx context.Context, c identity.Caller, id string, req contract.DeclineCardRequest) (contract.Card, error)
}

// propose takes a delegate's call of consent operation op: the body is read whole (within
// the route's bound), and the authority either records a card, answered 202 here with
// nothing run (done true), or records the delegate policy's exemption, and the call goes
// on to its handler as the delegate with its body put back (done false).
func (s *Server) propose(w http.ResponseWriter, r *http.Request, op opclass.Operation) (done bool, err error) {
	if s.cards == nil {
		return true, contract.Errorf(contract.CodeConsentRequired, "%s needs the consent of member %s, and this server records no cards; ask them to do it.", op.Name, caller(r).Name)
	}
	limit := s.maxBody
	if op.Name == "capability.install" {
		limit = s.maxUpload
	}
	body, err := readJSON(w, r, limit)
	if err != nil {
		return true, err
	}
	values, _ := op.PathValues(r.URL.EscapedPath())
	card, err := s.cards.Propose(r.Context(), caller(r), project(r), authority.ConsentCall{Operation: op, Path: r.URL.EscapedPath(),
		Values: values, Body: body, Reason: r.Header.Get(contract.ReasonHeader)})
	if err != nil {
		return true, err
	}
	if card == nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		return false, nil
	}
	return true, writeJSON(w, http.StatusAccepted, contract.CardAnswer{Code: contract.CodeCardRecorded, Card: *card,
		Teaching: fmt.Sprintf("nothing ran: %s needs its member's consent, so it is card %s; a member must confirm it with docket confirm %s or on Needs you.", op.Name, card.ID, card.ID)})
}

func (s *Server) handleCards(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.ids.Cards(r.Context(), caller(r), project(r), contract.CardState(r.URL.Query().Get("state")))
	if err != nil {
		return err
	}
	page, err := paginate(r, cs, func(c contract.Card) string { return c.ID })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleCard(w http.ResponseWriter, r *http.Request) error {
	c, err := s.ids.Card(r.Context(), caller(r), r.PathValue("card"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}

func (s *Server) handleDeclineCard(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeJSON[contract.DeclineCardRequest](w, r, s.maxBody)
	if err != nil {
		return err
	}
	c, err := s.ids.DeclineCard(r.Context(), caller(r), r.PathValue("card"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c)
}

func (s *Server) handleConfirmCard(w http.ResponseWriter, r *http.Request) error {
	conf, err := s.confirmCard(r, r.PathValue("card"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, conf)
}

// confirmCard confirms card id for the request's member and runs its call once, as that
// member, through the call's own handler and so through every check it makes; the
// outcome is recorded on the card, and the call's answer is returned this once.
func (s *Server) confirmCard(r *http.Request, id string) (contract.CardConfirmation, error) {
	if s.cards == nil {
		return contract.CardConfirmation{}, contract.Errorf(contract.CodeNotFound, "this server records no cards.")
	}
	c := caller(r)
	card, err := s.cards.ConfirmCard(r.Context(), c, id)
	if err != nil {
		return contract.CardConfirmation{}, err
	}
	// Confirmed, the call runs to its end even if the member's request goes away first.
	status, result := s.runCard(r.WithContext(context.WithoutCancel(r.Context())), card)
	out := contract.CardOutcome{Status: status}
	var refusal contract.Error
	if status >= http.StatusBadRequest && json.Unmarshal(result, &refusal) == nil {
		out.ErrorCode = refusal.Code
	}
	// The call ran (or was refused) already, so its outcome is recorded even when the
	// member's request has gone, and its answer is handed over even when the outcome could
	// not be recorded: the answer may hold a token shown this once.
	settled, err := s.ids.SettleCard(context.WithoutCancel(r.Context()), c, id, out)
	if err != nil {
		s.log.ErrorContext(r.Context(), "card outcome not recorded", logCard, id, logErr, err)
		card.Outcome, settled = &out, card
	}
	return contract.CardConfirmation{Card: settled, Result: result}, nil
}

// runCard runs card's call as the caller of r through the handler its route is served by.
func (s *Server) runCard(r *http.Request, card contract.Card) (int, json.RawMessage) {
	op, known := opclass.ByName(card.Operation)
	h, ok := s.handlers[op.Route]
	values, match := op.PathValues(card.Path)
	if !known || !ok || !match {
		return s.cardRefusal(r, fmt.Errorf("card %s: no handler serves %s %s", card.ID, card.Method, card.Path))
	}
	req, err := http.NewRequestWithContext(r.Context(), op.Method(), card.Path, bytes.NewReader(card.Body))
	if err != nil {
		return s.cardRefusal(r, fmt.Errorf("card %s: %w", card.ID, err))
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range values {
		req.SetPathValue(k, v)
	}
	rec := &recorder{header: http.Header{}}
	if err := h(rec, req); err != nil {
		return s.cardRefusal(req, err)
	}
	return rec.status, bytes.TrimSpace(rec.body.Bytes())
}

// cardRefusal is a card's call refused: its status and {"errorCode","teaching"}, as the
// API would have answered it.
func (s *Server) cardRefusal(r *http.Request, err error) (int, json.RawMessage) {
	ce := s.publicError(r, err)
	b, merr := json.Marshal(contract.Error{Code: ce.Code, Teaching: ce.Teaching})
	if merr != nil {
		return http.StatusInternalServerError, json.RawMessage(`{"errorCode":"internal"}`)
	}
	return httpStatus(ce.Code), b
}

// recorder is the ResponseWriter a card's call answers into.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
