package notice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// BudgetWarned is the event type of a budget warning.
const BudgetWarned = event.BudgetWarned

// item is one notice's message: what a webhook receives as JSON (beside text, the line
// a chat shows) and what an e-mail says. It never holds a call's arguments, a token or
// a key: only kinds, ids, names of tools and the link.
type item struct {
	Notice  string    `json:"notice"`
	Kind    string    `json:"kind"`
	Project string    `json:"project"`
	Subject string    `json:"subject"`
	Text    string    `json:"text"`
	Link    string    `json:"link"`
	At      time.Time `json:"at"`
}

// classify returns the notice an event makes, if any: a Request pending a decision, a card
// to confirm, an Operation in needs_person, a budget warning, a failed task.
func (k *Keeper) classify(e store.Event) (item, bool) {
	it := item{Project: e.Project, At: e.At}
	switch e.Type {
	case event.RequestCreated:
		var d event.RequestCreatedData
		if json.Unmarshal(e.Data, &d) != nil || d.State != contract.RequestPending {
			return item{}, false
		}
		what := d.Vector.Action
		if d.Vector.Tool != "" {
			what = d.Vector.Tool
		}
		it.Kind, it.Subject = contract.NoticeRequest, string(d.ID)
		it.Text = fmt.Sprintf("Docket: request %s in project %s waits for a decision: %s wants %s.", d.ID, e.Project, d.RequestedBy, what)
	case event.CardRecorded:
		var d event.CardRecordedData
		if json.Unmarshal(e.Data, &d) != nil {
			return item{}, false
		}
		it.Kind, it.Subject = contract.NoticeCard, d.ID
		it.Text = fmt.Sprintf("Docket: card %s in project %s waits for you to confirm it: %s proposes %s.", d.ID, e.Project, d.ProposedBy, d.Operation)
	case event.OpAdmitted, event.OpChanged:
		var d event.Operation
		if json.Unmarshal(e.Data, &d) != nil || d.State != contract.OpNeedsPerson {
			return item{}, false
		}
		it.Kind, it.Subject = contract.NoticeOperation, fmt.Sprintf("%s/%d", d.Agent, d.Ordinal)
		it.Text = fmt.Sprintf("Docket: operation %d of agent %s in project %s needs a person (%s): docket reconcile settles it.", d.Ordinal, d.Agent, e.Project, d.Tool)
	case event.TaskReported:
		var d event.TaskReportedData
		if json.Unmarshal(e.Data, &d) != nil || d.State != contract.TaskFailed {
			return item{}, false
		}
		it.Kind, it.Subject = contract.NoticeTaskFailed, string(d.Task)
		it.Text = fmt.Sprintf("Docket: task %s in project %s failed", d.Task, e.Project)
		if d.ErrorCode != "" {
			it.Text += " (" + string(d.ErrorCode) + ")"
		}
		it.Text += "."
	case BudgetWarned:
		// The crossing's fields, read by name: the budget, the limit's kind and figures.
		var d struct {
			Budget string  `json:"budget"`
			Kind   string  `json:"kind"`
			Used   float64 `json:"used"`
			Limit  float64 `json:"limit"`
			Agent  string  `json:"agent"`
		}
		if json.Unmarshal(e.Data, &d) != nil || d.Budget == "" {
			it.Kind, it.Subject = contract.NoticeBudget, e.ID
			it.Text = fmt.Sprintf("Docket: a budget in project %s reached its warning share (event %d).", e.Project, e.Seq)
			break
		}
		it.Kind, it.Subject = contract.NoticeBudget, d.Budget
		it.Text = fmt.Sprintf("Docket: budget %s in project %s reached its warning share: %g of %g %s used.", d.Budget, e.Project, d.Used, d.Limit, d.Kind)
	default:
		return item{}, false
	}
	it.Link = k.link(e.Project, it.Kind, it.Subject)
	return it, true
}

// link is the console page of a notice's subject.
func (k *Keeper) link(project, kind, subject string) string {
	p := k.publicURL() + "/projects/" + url.PathEscape(project)
	switch kind {
	case contract.NoticeRequest:
		return p + "/needs#" + url.PathEscape(subject)
	case contract.NoticeCard:
		return p + "/cards/" + url.PathEscape(subject) + "/confirm"
	case contract.NoticeOperation:
		return p + "/operations"
	case contract.NoticeTaskFailed:
		return p + "/events?type=" + event.TaskReported
	case contract.NoticeBudget:
		return p + "/events?type=" + BudgetWarned
	}
	return p + "/notices"
}

// scanPage is how many events one look reads per project.
const scanPage = 200

// scan reads project's log past its notice cursor and adds a notice per subscription the
// events match, moving the cursor in the same transaction: another instance that read
// the same cursor finds it moved and adds nothing.
func (k *Keeper) scan(ctx context.Context, project string) error {
	for {
		from, err := k.cfg.Store.NoticeCursor(ctx, project)
		if err != nil {
			return err
		}
		events, err := k.cfg.Store.Events(ctx, project, from, scanPage)
		if err != nil {
			return fmt.Errorf("notices of %s: %w", project, err)
		}
		if len(events) == 0 {
			return nil
		}
		subs, err := k.cfg.Store.NoticeSubscriptions(ctx, project, "")
		if err != nil {
			return err
		}
		var notices []store.Notice
		for _, e := range events {
			it, ok := k.classify(e)
			if !ok {
				continue
			}
			for _, s := range subs {
				if !slices.Contains(s.Kinds, it.Kind) || e.At.Before(s.CreatedAt) {
					continue
				}
				n, err := k.notice(s, it, e.At, k.now())
				if err != nil {
					return err
				}
				notices = append(notices, n)
			}
		}
		to := events[len(events)-1].Seq
		err = k.cfg.Store.Update(ctx, func(tx store.Tx) error {
			if err := tx.AdvanceNoticeCursor(ctx, project, from, to); err != nil {
				return err
			}
			for _, n := range notices {
				if err := tx.AddNotice(ctx, n); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, store.ErrConflict) {
			continue // another instance made these notices; read on from where it left
		}
		if err != nil {
			return fmt.Errorf("notices of %s: %w", project, err)
		}
		if len(notices) > 0 {
			k.poke()
		}
		if len(events) < scanPage {
			return nil
		}
	}
}

// notice is the outbox row of it for s, made at created: due now, or at the end of the
// digest window it falls in.
func (k *Keeper) notice(s store.NoticeSubscription, it item, created, now time.Time) (store.Notice, error) {
	id, err := identity.NewID(k.cfg.Rand, "ntc_")
	if err != nil {
		return store.Notice{}, err
	}
	it.Notice = id
	body, err := json.Marshal(it)
	if err != nil {
		return store.Notice{}, err
	}
	due := now
	if s.Digest > 0 && it.Kind != "test" {
		due = created.Truncate(s.Digest).Add(s.Digest)
	}
	return store.Notice{ID: id, Subscription: s.ID, Project: s.Project, Kind: it.Kind, Subject: it.Subject, Body: body, CreatedAt: created, DueAt: due}, nil
}
