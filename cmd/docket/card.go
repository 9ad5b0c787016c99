package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// confirmCmd confirms a delegate's card: its call runs once, as the member.
type confirmCmd struct {
	Output string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
	Card   string `arg:"" help:"The card's id (docket card list shows the open ones)."`
}

func (c *confirmCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var conf contract.CardConfirmation
	if err := cl.do(ctx, http.MethodPost, "/api/v1/cards/"+url.PathEscape(c.Card)+"/confirm", nil, &conf); err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, conf)
	}
	card := conf.Card
	if o := card.Outcome; o != nil && o.ErrorCode != "" {
		var refusal contract.Error
		if err := json.Unmarshal(conf.Result, &refusal); err != nil {
			return fmt.Errorf("read the refusal of card %s: %w", card.ID, err)
		}
		return fmt.Errorf("card %s was confirmed and its %s ran as you, and was refused: %w", card.ID, card.Operation, &refusal)
	}
	if _, err := fmt.Fprintf(e.Stdout, "card %s confirmed: %s ran as you (%d)\n", card.ID, card.Operation, card.Outcome.Status); err != nil {
		return err
	}
	if len(conf.Result) > 0 {
		_, err = fmt.Fprintf(e.Stdout, "its answer (shown once):\n%s\n", conf.Result)
	}
	return err
}

// cardCmd reads and declines delegates' cards.
type cardCmd struct {
	List    cardListCmd    `cmd:"" help:"List the project's cards: what delegates propose and their members confirm."`
	Show    cardShowCmd    `cmd:"" help:"Print one card: the exact call, why, what it changes and what it is bound to."`
	Decline cardDeclineCmd `cmd:"" help:"Close a card without running its call."`
}

type cardListCmd struct {
	clientFlags
	State string `help:"Only cards in this state: open, confirmed, declined or void (default: every state)." enum:",open,confirmed,declined,void" default:""`
}

func (c *cardListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	path := projectPath(c.Project, "cards")
	if c.State != "" {
		path += "?state=" + url.QueryEscape(c.State)
	}
	items, err := list[contract.Card](ctx, cl, path)
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, card := range items {
		rows = append(rows, []string{card.ID, string(card.State), card.Operation, string(card.ProposedBy), card.Reason})
	}
	return writeList(e, []string{"card", "state", "operation", "proposed by", "reason"}, rows, "no cards")
}

type cardShowCmd struct {
	Output string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
	Card   string `arg:"" help:"The card's id."`
}

func (c *cardShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var card contract.Card
	if err := cl.do(ctx, http.MethodGet, "/api/v1/cards/"+url.PathEscape(c.Card), nil, &card); err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, card)
	}
	_, err = fmt.Fprintf(e.Stdout, "card %s (%s) of project %s\nproposed by %s at %s\ncall:     %s %s\nbody:     %s\ndigest:   %s\nchanges:  %s\nreason:   %s\nbound to: %s %s at %s\npolicy:   delegate policy version %d\n",
		card.ID, card.State, card.Project, card.ProposedBy, card.CreatedAt.Format("2006-01-02 15:04:05 MST"),
		card.Method, card.Path, orNone(string(card.Body)), card.BodyDigest, card.Changes, card.Reason,
		card.Subject.Kind, card.Subject.Ref, card.Subject.Version, card.Policy)
	if err != nil {
		return err
	}
	if card.ClosedAt != nil {
		_, err = fmt.Fprintf(e.Stdout, "closed:   %s by %s at %s %s\n", card.State, card.ClosedBy, card.ClosedAt.Format("2006-01-02 15:04:05 MST"), card.Why)
	}
	if err == nil && card.Outcome != nil {
		_, err = fmt.Fprintf(e.Stdout, "outcome:  %d %s\n", card.Outcome.Status, card.Outcome.ErrorCode)
	}
	return err
}

type cardDeclineCmd struct {
	Output string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
	Reason string `help:"Why, recorded on the card."`
	Card   string `arg:"" help:"The card's id."`
}

func (c *cardDeclineCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var card contract.Card
	if err := cl.do(ctx, http.MethodPost, "/api/v1/cards/"+url.PathEscape(c.Card)+"/decline", contract.DeclineCardRequest{Reason: c.Reason}, &card); err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, card)
	}
	_, err = fmt.Fprintf(e.Stdout, "card %s declined; its call did not run\n", card.ID)
	return err
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
