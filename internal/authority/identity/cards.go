package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// CardCall is a delegate's consent call as a card records it: the exact call,
// with its body canonical and its digest, why the delegate proposes it, what it changes,
// its subject as it stood and the delegate policy version in force.
type CardCall struct {
	Operation  string
	Method     string
	Path       string
	Body       json.RawMessage // canonical JSON (RFC 8785), or empty
	BodyDigest string
	Reason     string
	Changes    string
	Subject    contract.CardSubject
	Policy     int64
}

// CheckReason checks a delegate's reason for a consent call: required, one line, bounded.
func CheckReason(reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return contract.Errorf(contract.CodeCardReason, "a delegate's consent call needs a reason its member reads on the card; send it in the %s header (DOCKET_REASON for the CLI).", contract.ReasonHeader)
	case len(reason) > contract.MaxCardReason || !utf8.ValidString(reason) || strings.ContainsAny(reason, "\r\n"):
		return contract.Errorf(contract.CodeInvalidArgument, "the reason is not one line of at most %d bytes of UTF-8; shorten it.", contract.MaxCardReason)
	}
	return nil
}

// RecordCard records call as an open card of delegate c in project, and runs nothing.
// A delegate holds at most [contract.MaxOpenCards] open cards per project; a body that
// holds a Docket credential is refused, so a card never keeps a secret.
func (a *Directory) RecordCard(ctx context.Context, c Caller, project contract.ProjectID, call CardCall) (contract.Card, error) {
	if !c.IsDelegate() {
		return contract.Card{}, contract.Errorf(contract.CodeForbidden, "only a delegate's consent call is recorded as a card; a member acting itself runs the call.")
	}
	if err := c.RequireMember(project); err != nil {
		return contract.Card{}, err
	}
	if err := CheckReason(call.Reason); err != nil {
		return contract.Card{}, err
	}
	if strings.Contains(string(call.Body), "dkt_") {
		return contract.Card{}, contract.Errorf(contract.CodeCardSecret, "the call's body holds a Docket credential, and a card never keeps a secret; send the call without it.")
	}
	id, err := NewID(a.rand, "crd_")
	if err != nil {
		return contract.Card{}, fmt.Errorf("record card: %w", err)
	}
	now := a.nowUTC()
	card := contract.Card{ID: id, Project: project, Delegate: c.DelegateID, Member: contract.MemberID(c.ID), ProposedBy: c.Principal(),
		Operation: call.Operation, Method: call.Method, Path: call.Path, Body: call.Body, BodyDigest: call.BodyDigest,
		Reason: call.Reason, Changes: call.Changes, Subject: call.Subject, Policy: call.Policy, State: contract.CardOpen, CreatedAt: now}
	err = a.store.Update(ctx, func(tx store.Tx) error {
		// Under the head lock no other card of this project is recorded, so the count holds.
		if _, err := tx.LockHead(ctx, string(project)); err != nil {
			return err
		}
		open, err := tx.Cards(ctx, store.CardFilter{Project: string(project), Delegate: c.DelegateID, State: string(contract.CardOpen)})
		if err != nil {
			return err
		}
		if len(open) >= contract.MaxOpenCards {
			return contract.Errorf(contract.CodeCardLimit, "delegate %s has %d open cards in project %s, the most it may; ask member %s to confirm or decline some (docket card list).",
				c.Delegate, len(open), project, c.Name)
		}
		rec, err := json.Marshal(card)
		if err != nil {
			return fmt.Errorf("encode card: %w", err)
		}
		if err := tx.CreateCard(ctx, store.Card{ID: id, Project: string(project), Delegate: c.DelegateID, State: string(contract.CardOpen), CreatedAt: now, Record: rec}); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.CardRecordedData{Card: card})
	})
	if err != nil {
		return contract.Card{}, fmt.Errorf("record card of %s: %w", call.Operation, eventlog.Refuse(err, "card "+id))
	}
	return card, nil
}

// RecordExempt records that the delegate policy version call.Policy exempts delegate c's
// consent call from a card, before the call runs as the delegate.
func (a *Directory) RecordExempt(ctx context.Context, c Caller, project contract.ProjectID, call CardCall) error {
	if !c.IsDelegate() {
		return contract.Errorf(contract.CodeForbidden, "only a delegate's call is exempted from a card.")
	}
	if err := c.RequireMember(project); err != nil {
		return err
	}
	now := a.nowUTC()
	err := a.store.Update(ctx, func(tx store.Tx) error {
		return eventlog.Append(ctx, tx, project, c.Principal(), now, event.CardExemptedData{Operation: call.Operation, Method: call.Method,
			Path: call.Path, BodyDigest: call.BodyDigest, Reason: call.Reason, Delegate: c.DelegateID, Policy: call.Policy, At: now})
	})
	if err != nil {
		return fmt.Errorf("record exemption of %s: %w", call.Operation, eventlog.Refuse(err, "project "+string(project)))
	}
	return nil
}

// Cards returns project's cards in state ("" for every state), oldest first, for a
// member or its delegate.
func (a *Directory) Cards(ctx context.Context, c Caller, project contract.ProjectID, state contract.CardState) ([]contract.Card, error) {
	if err := c.RequireMember(project); err != nil {
		return nil, err
	}
	switch state {
	case "", contract.CardOpen, contract.CardConfirmed, contract.CardDeclined, contract.CardVoid:
	default:
		return nil, contract.Errorf(contract.CodeInvalidArgument, "%.40q is not a card state; use open, confirmed, declined or void.", state)
	}
	cs, err := a.store.Cards(ctx, store.CardFilter{Project: string(project), State: string(state)})
	if err != nil {
		return nil, fmt.Errorf("list cards: %w", eventlog.Refuse(err, "project "+string(project)))
	}
	out := make([]contract.Card, 0, len(cs))
	for _, sc := range cs {
		card, err := cardWire(sc)
		if err != nil {
			return nil, err
		}
		out = append(out, card)
	}
	return out, nil
}

// Card returns one card, for a member of its project or its delegate.
func (a *Directory) Card(ctx context.Context, c Caller, id string) (contract.Card, error) {
	card, err := a.readCard(ctx, a.store, id)
	if err != nil {
		return contract.Card{}, err
	}
	if err := c.RequireMember(card.Project); err != nil {
		return contract.Card{}, errNoCard(id)
	}
	return card, nil
}

func errNoCard(id string) error {
	return contract.Errorf(contract.CodeNotFound, "no card %.40q in your projects; docket card list shows the open ones.", id)
}

func (a *Directory) readCard(ctx context.Context, r store.Reader, id string) (contract.Card, error) {
	sc, err := r.Card(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return contract.Card{}, errNoCard(id)
	}
	if err != nil {
		return contract.Card{}, fmt.Errorf("read card %s: %w", id, eventlog.Refuse(err, "card "+id))
	}
	return cardWire(sc)
}

func cardWire(sc store.Card) (contract.Card, error) {
	var card contract.Card
	if err := json.Unmarshal(sc.Record, &card); err != nil {
		return contract.Card{}, fmt.Errorf("decode card %s: %w", sc.ID, err)
	}
	return card, nil
}

// ConfirmCard confirms an open card for member c acting itself, after binding it again:
// now reads the card's subject as it stands, and a version that moved since the card was
// recorded voids the card (card_void, naming what changed), as does a delegate no longer
// live. A confirmed card's call then runs once, as c; a second confirm is refused
// card_closed.
func (a *Directory) ConfirmCard(ctx context.Context, c Caller, id string, now func(contract.Card) (contract.CardSubject, error)) (contract.Card, error) {
	card, err := a.cardInPerson(ctx, c, id)
	if err != nil {
		return contract.Card{}, err
	}
	if err := cardOpen(card); err != nil {
		return contract.Card{}, err
	}
	why := ""
	sub, err := now(card)
	switch {
	case err != nil:
		return contract.Card{}, fmt.Errorf("bind card %s again: %w", id, err)
	case sub != card.Subject:
		why = fmt.Sprintf("its subject changed since it was recorded: %s %s was %s and is now %s", sub.Kind, sub.Ref, card.Subject.Version, sub.Version)
	}
	at := a.nowUTC()
	err = a.store.Update(ctx, func(tx store.Tx) error {
		if why == "" {
			live, err := delegateLive(ctx, tx, string(card.Member), card.Delegate, at)
			if err != nil {
				return err
			}
			if !live {
				why = "its delegate was revoked or its life ended"
			}
		}
		state := contract.CardConfirmed
		if why != "" {
			state = contract.CardVoid
		}
		return closeCard(ctx, tx, &card, state, c.Principal(), at, why)
	})
	if err != nil {
		return contract.Card{}, fmt.Errorf("confirm card %s: %w", id, err)
	}
	if why != "" {
		return card, contract.Errorf(contract.CodeCardVoid, "card %s is void: %s; ask the delegate to propose the call again as it now stands.", id, why)
	}
	return card, nil
}

// SettleCard records how a confirmed card's call ended (card.ran); the call's answer is
// not kept.
func (a *Directory) SettleCard(ctx context.Context, c Caller, id string, out contract.CardOutcome) (contract.Card, error) {
	card, err := a.cardInPerson(ctx, c, id)
	if err != nil {
		return contract.Card{}, err
	}
	if card.State != contract.CardConfirmed || card.Outcome != nil {
		return contract.Card{}, contract.Errorf(contract.CodeCardClosed, "card %s has no call waiting for its outcome.", id)
	}
	card.Outcome = &out
	at := a.nowUTC()
	err = a.store.Update(ctx, func(tx store.Tx) error {
		rec, err := json.Marshal(card)
		if err != nil {
			return fmt.Errorf("encode card: %w", err)
		}
		if err := tx.UpdateCard(ctx, store.Card{ID: card.ID, State: string(card.State), Record: rec}, string(contract.CardConfirmed)); err != nil {
			return err
		}
		return eventlog.Append(ctx, tx, card.Project, c.Principal(), at, event.CardRanData{ID: card.ID, Outcome: out})
	})
	if err != nil {
		return contract.Card{}, fmt.Errorf("settle card %s: %w", id, eventlog.Refuse(err, "card "+id))
	}
	return card, nil
}

// DeclineCard closes an open card without running it, for member c acting itself.
func (a *Directory) DeclineCard(ctx context.Context, c Caller, id string, req contract.DeclineCardRequest) (contract.Card, error) {
	card, err := a.cardInPerson(ctx, c, id)
	if err != nil {
		return contract.Card{}, err
	}
	if req.Reason != "" {
		if err := CheckReason(req.Reason); err != nil {
			return contract.Card{}, err
		}
	}
	if err := cardOpen(card); err != nil {
		return contract.Card{}, err
	}
	at := a.nowUTC()
	err = a.store.Update(ctx, func(tx store.Tx) error {
		return closeCard(ctx, tx, &card, contract.CardDeclined, c.Principal(), at, req.Reason)
	})
	if err != nil {
		return contract.Card{}, fmt.Errorf("decline card %s: %w", id, err)
	}
	return card, nil
}

// cardInPerson returns card id for member c acting itself: only a member confirms,
// settles or declines a card, never a delegate.
func (a *Directory) cardInPerson(ctx context.Context, c Caller, id string) (contract.Card, error) {
	card, err := a.Card(ctx, c, id)
	if err != nil {
		return contract.Card{}, err
	}
	if err := c.RequireInPerson(card.Project); err != nil {
		return contract.Card{}, err
	}
	return card, nil
}

func cardOpen(card contract.Card) error {
	if card.State != contract.CardOpen {
		return contract.Errorf(contract.CodeCardClosed, "card %s is %s already; a card runs at most once (docket card show %s).", card.ID, card.State, card.ID)
	}
	return nil
}

// closeCard moves an open card to state (confirmed, declined or void) with its event, in
// tx: a card another caller closed first is refused card_closed.
func closeCard(ctx context.Context, tx store.Tx, card *contract.Card, state contract.CardState, by contract.Principal, at time.Time, why string) error {
	card.State, card.ClosedAt, card.ClosedBy, card.Why = state, &at, by, why
	rec, err := json.Marshal(card)
	if err != nil {
		return fmt.Errorf("encode card: %w", err)
	}
	err = tx.UpdateCard(ctx, store.Card{ID: card.ID, State: string(state), Record: rec}, string(contract.CardOpen))
	if errors.Is(err, store.ErrConflict) {
		return contract.Errorf(contract.CodeCardClosed, "card %s was closed by another call first; a card runs at most once (docket card show %s).", card.ID, card.ID)
	}
	if err != nil {
		return err
	}
	var p event.Payload
	switch state {
	case contract.CardConfirmed:
		p = event.CardConfirmedData{Card: *card}
	case contract.CardDeclined:
		p = event.CardDeclinedData{Card: *card}
	case contract.CardVoid:
		p = event.CardVoidedData{Card: *card}
	default:
		return fmt.Errorf("close card %s: %s is not a state a card is closed in", card.ID, state)
	}
	return eventlog.Append(ctx, tx, card.Project, by, at, p)
}

// delegateLive reports whether member's delegate id is neither revoked nor past its life.
func delegateLive(ctx context.Context, r store.Reader, member, id string, now time.Time) (bool, error) {
	ds, err := r.Delegates(ctx, member)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		if d.ID == id {
			return d.RevokedAt == nil && now.Before(d.ExpiresAt), nil
		}
	}
	return false, nil
}

// voidCards voids every open card of delegate d in tx, each with its card.voided event.
func voidCards(ctx context.Context, tx store.Tx, d store.Delegate, at time.Time, why string) error {
	open, err := tx.Cards(ctx, store.CardFilter{Delegate: d.ID, State: string(contract.CardOpen)})
	if err != nil {
		return err
	}
	for _, sc := range open {
		card, err := cardWire(sc)
		if err != nil {
			return err
		}
		if err := closeCard(ctx, tx, &card, contract.CardVoid, contract.NewPrincipal(contract.PrincipalMember, d.Member), at, why); err != nil {
			return err
		}
	}
	return nil
}

// Subject kinds identity reads, as the table of operation classes names them
// (opclass.Subject*; identity does not import it).
const (
	subjectAgent      = "agent"
	subjectConnection = "connection"
	subjectSource     = "source"
	subjectTool       = "tool"
)

// SubjectNow reads the version of an identity subject as it stands: an Agent
// (refs: its id or name), a Connection (its id or name), a Source or a tool lock on a
// Connection (the Connection, then the Source name or tool id). The version digests the
// record — an Agent's includes the digest of its token, so a replaced token moves it —
// or is [contract.SubjectAbsent]. ok is false for a kind identity does not keep.
func (a *Directory) SubjectNow(ctx context.Context, project contract.ProjectID, kind string, refs []string) (sub contract.CardSubject, ok bool, err error) {
	sub = contract.CardSubject{Kind: kind, Ref: strings.Join(refs, "/"), Version: contract.SubjectAbsent}
	ref := func(i int) string {
		if i < len(refs) {
			return refs[i]
		}
		return ""
	}
	var parts []any
	switch kind {
	case subjectAgent:
		ag, err := FindAgent(ctx, a.store, project, ref(0))
		if err != nil {
			return absentOr(sub, err)
		}
		parts = []any{ag.ID, ag.Kind, contract.Sum(ag.TokenDigest).String(), ag.RevokedAt}
	case subjectConnection, subjectSource, subjectTool:
		cn, err := findConnection(ctx, a.store, project, ref(0))
		if err != nil {
			return absentOr(sub, err)
		}
		parts = []any{cn.ID, cn.RevokedAt}
		switch kind {
		case subjectSource:
			ss, err := a.store.Sources(ctx, cn.ID)
			if err != nil {
				return sub, true, fmt.Errorf("read sources of %s: %w", cn.ID, err)
			}
			parts = append(parts, contract.SubjectAbsent)
			for _, s := range ss {
				if s.ID == ref(1) {
					parts[len(parts)-1] = s.Digest
				}
			}
		case subjectTool:
			ls, err := a.store.ToolLocks(ctx, cn.ID)
			if err != nil {
				return sub, true, fmt.Errorf("read tool locks of %s: %w", cn.ID, err)
			}
			parts = append(parts, contract.SubjectAbsent)
			for _, l := range ls {
				if l.Tool == ref(1) {
					parts[len(parts)-1] = l.Digest
					if len(l.Data) > 0 {
						// The record too: a card on an approval is void once another changed it.
						parts[len(parts)-1] = []any{l.Digest, contract.Sum(l.Data).String()}
					}
				}
			}
		}
	default:
		return sub, false, nil
	}
	v, err := VersionOf(parts)
	sub.Version = v
	return sub, true, err
}

// VersionOf is a subject's version: sha256 over the JSON of what names its state.
func VersionOf(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode subject version: %w", err)
	}
	return contract.Sum(b).String(), nil
}

func absentOr(sub contract.CardSubject, err error) (contract.CardSubject, bool, error) {
	if errors.Is(err, store.ErrNotFound) {
		return sub, true, nil
	}
	return sub, true, fmt.Errorf("read subject %s %s: %w", sub.Kind, sub.Ref, err)
}
