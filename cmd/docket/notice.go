package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// noticeCmd manages the member's notice subscriptions (docs/notices.md).
type noticeCmd struct {
	Subscribe   noticeSubscribeCmd   `cmd:"" help:"Subscribe to notices of kinds of things that need you, sent to a webhook or an e-mail address."`
	List        noticeListCmd        `cmd:"" help:"List your subscriptions in the project with their last delivery."`
	Unsubscribe noticeUnsubscribeCmd `cmd:"" help:"Stop a subscription; its notices not yet sent are dropped."`
	Test        noticeTestCmd        `cmd:"" help:"Send one test notice on a subscription now."`
}

type noticeSubscribeCmd struct {
	clientFlags
	Kind    []string `required:"" sep:"," help:"What to be told of: request, card, operation, budget, task_failed (comma-separated)."`
	Webhook string   `xor:"to" required:"" help:"A webhook URL to POST signed JSON notices to (a chat's incoming webhook shows their text). It may be a credential: it is kept only in the store."`
	Email   string   `xor:"to" required:"" help:"An e-mail address to send notices to (serve needs --smtp and --smtp-from)."`
	Digest  string   `help:"Batch the notices of each window into one, such as 15m (default: each at once)."`
}

func (c *noticeSubscribeCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	req := contract.SubscribeNoticesRequest{Kinds: c.Kind, Webhook: c.Webhook, Email: c.Email, Digest: c.Digest}
	var s contract.NoticeSubscription
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "notices"), req, &s); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, s)
	}
	_, err = fmt.Fprintf(e.Stdout, "subscription %s: %s to %s %s, %s; docket notice test %s sends one now\n",
		s.ID, strings.Join(s.Kinds, ","), s.Channel, s.Destination, digestText(s), s.ID)
	return err
}

func digestText(s contract.NoticeSubscription) string {
	if s.Digest == "" {
		return "each at once"
	}
	return "a digest every " + s.Digest
}

type noticeListCmd struct {
	clientFlags
}

func (c *noticeListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.NoticeSubscription](ctx, cl, projectPath(c.Project, "notices"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, s := range items {
		last := "none yet"
		if s.LastState != "" {
			last = s.LastState
			if s.LastError != "" {
				last += ": " + s.LastError
			}
		}
		rows = append(rows, []string{s.ID, strings.Join(s.Kinds, ","), s.Channel + " " + s.Destination, digestText(s), last})
	}
	return writeList(e, []string{"id", "kinds", "to", "digest", "last delivery"}, rows,
		"no subscriptions; docket notice subscribe --kind request --webhook URL makes one")
}

type noticeUnsubscribeCmd struct {
	clientFlags
	ID string `arg:"" help:"The subscription's id (nsub_…)."`
}

func (c *noticeUnsubscribeCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var s contract.NoticeSubscription
	if err := cl.do(ctx, http.MethodDelete, projectPath(c.Project, "notices", c.ID), nil, &s); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, s)
	}
	_, err = fmt.Fprintf(e.Stdout, "unsubscribed %s: no more notices to %s\n", s.ID, s.Destination)
	return err
}

type noticeTestCmd struct {
	clientFlags
	ID string `arg:"" help:"The subscription's id (nsub_…)."`
}

func (c *noticeTestCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var tn contract.NoticeTest
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "notices", c.ID, "test"), nil, &tn); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, tn)
	}
	_, err = fmt.Fprintf(e.Stdout, "test notice %s queued on %s; docket notice list shows its delivery\n", tn.Notice, tn.Subscription)
	return err
}
