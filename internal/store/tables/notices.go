package tables

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/store"
)

const subscriptionColumns = `SELECT id, project, member, kinds, channel, target, digest_ns, created_at, deleted_at, last_state, last_at, last_error FROM notice_subscriptions`

func scanSubscription(r Row) (store.NoticeSubscription, error) {
	var s store.NoticeSubscription
	var kinds string
	var digest, created int64
	var deleted, last *int64
	if err := r.Scan(&s.ID, &s.Project, &s.Member, &kinds, &s.Channel, &s.Target, &digest, &created, &deleted, &s.LastState, &last, &s.LastError); err != nil {
		return store.NoticeSubscription{}, err
	}
	s.Kinds = strings.Split(kinds, ",")
	s.Digest = time.Duration(digest)
	s.CreatedAt = fromNanos(created)
	s.DeletedAt, s.LastAt = fromNullNanos(deleted), fromNullNanos(last)
	return s, nil
}

const noticeColumns = `SELECT id, subscription, project, kind, subject, body, created_at, due_at, attempts, state, claimed_by, claim_until, settled_at, last_error FROM notices`

func scanNotice(r Row) (store.Notice, error) {
	var n store.Notice
	var created, due, until int64
	var attempts int64
	var settled *int64
	if err := r.Scan(&n.ID, &n.Subscription, &n.Project, &n.Kind, &n.Subject, &n.Body, &created, &due, &attempts, &n.State, &n.ClaimedBy, &until, &settled, &n.LastError); err != nil {
		return store.Notice{}, err
	}
	n.Attempts = int(attempts)
	n.CreatedAt, n.DueAt, n.ClaimUntil = fromNanos(created), fromNanos(due), fromNanos(until)
	n.SettledAt = fromNullNanos(settled)
	return n, nil
}

// NoticeSubscription implements [store.Reader.NoticeSubscription].
func (r Reader) NoticeSubscription(ctx context.Context, id string) (store.NoticeSubscription, error) {
	s, err := scanSubscription(r.C.QueryRow(ctx, subscriptionColumns+` WHERE id = $1`, id))
	if err != nil {
		return store.NoticeSubscription{}, fmt.Errorf("read notice subscription %s: %w", id, err)
	}
	return s, nil
}

// NoticeSubscriptions implements [store.Reader.NoticeSubscriptions].
func (r Reader) NoticeSubscriptions(ctx context.Context, project, member string) ([]store.NoticeSubscription, error) {
	ss, err := list(ctx, r.C, scanSubscription, subscriptionColumns+` WHERE project = $1 AND ($2 = '' OR member = $2) AND deleted_at IS NULL ORDER BY id`, project, member)
	if err != nil {
		return nil, fmt.Errorf("list notice subscriptions of %s: %w", project, err)
	}
	return ss, nil
}

// NoticeCursor implements [store.Reader.NoticeCursor].
func (r Reader) NoticeCursor(ctx context.Context, project string) (int64, error) {
	ns, err := list(ctx, r.C, func(row Row) (int64, error) {
		var n int64
		return n, row.Scan(&n)
	}, `SELECT seq FROM notice_cursors WHERE project = $1`, project)
	if err != nil {
		return 0, fmt.Errorf("read notice cursor of %s: %w", project, err)
	}
	if len(ns) == 0 {
		return 0, nil
	}
	return ns[0], nil
}

// Notices implements [store.Reader.Notices].
func (r Reader) Notices(ctx context.Context, subscription string, limit int) ([]store.Notice, error) {
	if limit <= 0 {
		limit = defaultPage
	}
	ns, err := list(ctx, r.C, scanNotice, noticeColumns+` WHERE subscription = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, subscription, limit)
	if err != nil {
		return nil, fmt.Errorf("list notices of %s: %w", subscription, err)
	}
	return ns, nil
}

// CreateNoticeSubscription implements [store.Tx.CreateNoticeSubscription].
func (t *Tx) CreateNoticeSubscription(ctx context.Context, s store.NoticeSubscription) error {
	kinds := strings.Join(s.Kinds, ",")
	if err := required("notice subscription", "an id", s.ID, "a project", s.Project, "a member", s.Member, "kinds", kinds,
		"a channel", s.Channel, "a target", s.Target); err != nil {
		return err
	}
	if (s.Channel != "webhook" && s.Channel != "email") || s.Digest < 0 {
		return fmt.Errorf("notice subscription %s needs channel webhook or email and a digest of 0 or more: %w", s.ID, store.ErrInvalid)
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO notice_subscriptions (id, project, member, kinds, channel, target, digest_ns, created_at, deleted_at, last_state, last_at, last_error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		s.ID, s.Project, s.Member, kinds, s.Channel, s.Target, int64(s.Digest), nanos(s.CreatedAt), nullNanos(s.DeletedAt), s.LastState, nullNanos(s.LastAt), s.LastError); err != nil {
		return fmt.Errorf("create notice subscription %s: %w", s.ID, err)
	}
	return nil
}

// DeleteNoticeSubscription implements [store.Tx.DeleteNoticeSubscription].
func (t *Tx) DeleteNoticeSubscription(ctx context.Context, id string, at time.Time) error {
	n, err := t.C.Exec(ctx, `UPDATE notice_subscriptions SET deleted_at = COALESCE(deleted_at, $2) WHERE id = $1`, id, nanos(at))
	if err != nil {
		return fmt.Errorf("delete notice subscription %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("delete notice subscription %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// AdvanceNoticeCursor implements [store.Tx.AdvanceNoticeCursor].
func (t *Tx) AdvanceNoticeCursor(ctx context.Context, project string, from, to int64) error {
	if to < from {
		return fmt.Errorf("advance notice cursor of %s from %d back to %d: %w", project, from, to, store.ErrInvalid)
	}
	var n int64
	var err error
	if from == 0 {
		n, err = t.C.Exec(ctx, `INSERT INTO notice_cursors (project, seq) VALUES ($1, $2) ON CONFLICT (project) DO UPDATE SET seq = $2 WHERE notice_cursors.seq = 0`, project, to)
	} else {
		n, err = t.C.Exec(ctx, `UPDATE notice_cursors SET seq = $3 WHERE project = $1 AND seq = $2`, project, from, to)
	}
	if err != nil {
		return fmt.Errorf("advance notice cursor of %s: %w", project, err)
	}
	if n == 0 {
		return fmt.Errorf("advance notice cursor of %s: it moved from %d: %w", project, from, store.ErrConflict)
	}
	return nil
}

// AddNotice implements [store.Tx.AddNotice].
func (t *Tx) AddNotice(ctx context.Context, n store.Notice) error {
	if err := required("notice", "an id", n.ID, "a subscription", n.Subscription, "a project", n.Project, "a kind", n.Kind, "a body", string(n.Body)); err != nil {
		return err
	}
	if _, err := t.C.Exec(ctx, `INSERT INTO notices (id, subscription, project, kind, subject, body, created_at, due_at, attempts, state, claimed_by, claim_until, settled_at, last_error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, 'pending', '', 0, NULL, '')`,
		n.ID, n.Subscription, n.Project, n.Kind, n.Subject, n.Body, nanos(n.CreatedAt), nanos(n.DueAt)); err != nil {
		return fmt.Errorf("add notice %s: %w", n.ID, err)
	}
	return nil
}

// ClaimNotices implements [store.Tx.ClaimNotices].
func (t *Tx) ClaimNotices(ctx context.Context, now time.Time, by string, until time.Time, limit int) ([]store.Notice, error) {
	if by == "" {
		return nil, fmt.Errorf("claim notices needs a claimant: %w", store.ErrInvalid)
	}
	if limit <= 0 {
		limit = defaultPage
	}
	cands, err := list(ctx, t.C, scanNotice, noticeColumns+` WHERE state = 'pending' AND due_at <= $1 AND claim_until < $1
		AND subscription IN (SELECT id FROM notice_subscriptions WHERE deleted_at IS NULL) ORDER BY due_at, id LIMIT $2`, nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("list due notices: %w", err)
	}
	out := cands[:0]
	for _, n := range cands {
		// The claim holds only if nobody claimed it since the read (the row's lock
		// re-checks the condition on PostgreSQL; SQLite's writers are one at a time).
		k, err := t.C.Exec(ctx, `UPDATE notices SET claimed_by = $2, claim_until = $3 WHERE id = $1 AND state = 'pending' AND claim_until < $4`,
			n.ID, by, nanos(until), nanos(now))
		if err != nil {
			return nil, fmt.Errorf("claim notice %s: %w", n.ID, err)
		}
		if k == 1 {
			n.ClaimedBy, n.ClaimUntil = by, fromNanos(nanos(until))
			out = append(out, n)
		}
	}
	return out, nil
}

// SettleNotice implements [store.Tx.SettleNotice].
func (t *Tx) SettleNotice(ctx context.Context, n store.Notice) error {
	if n.State != "pending" && n.State != "delivered" && n.State != "failed" {
		return fmt.Errorf("settle notice %s: state %q: %w", n.ID, n.State, store.ErrInvalid)
	}
	k, err := t.C.Exec(ctx, `UPDATE notices SET state = $3, attempts = $4, due_at = $5, settled_at = $6, last_error = $7, claim_until = 0
		WHERE id = $1 AND claimed_by = $2 AND state = 'pending'`,
		n.ID, n.ClaimedBy, n.State, int64(n.Attempts), nanos(n.DueAt), nullNanos(n.SettledAt), n.LastError)
	if err != nil {
		return fmt.Errorf("settle notice %s: %w", n.ID, err)
	}
	if k == 0 {
		return fmt.Errorf("settle notice %s: not claimed by %s: %w", n.ID, n.ClaimedBy, store.ErrConflict)
	}
	if n.State == "pending" {
		return nil
	}
	at := n.DueAt
	if n.SettledAt != nil {
		at = *n.SettledAt
	}
	if _, err := t.C.Exec(ctx, `UPDATE notice_subscriptions SET last_state = $2, last_at = $3, last_error = $4 WHERE id = $1`,
		n.Subscription, n.State, nanos(at), n.LastError); err != nil {
		return fmt.Errorf("settle notice %s: %w", n.ID, err)
	}
	return nil
}
