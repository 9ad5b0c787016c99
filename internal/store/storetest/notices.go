package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

func seedSubscription(t *testing.T, s store.Store) store.NoticeSubscription {
	t.Helper()
	seedProject(t, s)
	sub := store.NoticeSubscription{ID: "ns1", Project: "p1", Member: "m1", Kinds: []string{"request", "card"}, Channel: "webhook",
		Target: "https://hooks.example/services/T0/B0/secret", Digest: 15 * time.Minute, CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateNoticeSubscription(ctx, sub) })
	return sub
}

func testNoticeSubscriptions(t *testing.T, h Harness) {
	s := open(t, h)
	sub := seedSubscription(t, s)
	ctx := t.Context()
	refused := []struct {
		name string
		s    store.NoticeSubscription
		want error
	}{
		{"an id in use", sub, store.ErrConflict},
		{"a missing member", func() store.NoticeSubscription { x := sub; x.ID, x.Member = "ns2", "nobody"; return x }(), store.ErrNotFound},
		{"an unknown channel", func() store.NoticeSubscription { x := sub; x.ID, x.Channel = "ns2", "pigeon"; return x }(), store.ErrInvalid},
		{"no target", func() store.NoticeSubscription { x := sub; x.ID, x.Target = "ns2", ""; return x }(), store.ErrInvalid},
		{"no kinds", func() store.NoticeSubscription { x := sub; x.ID, x.Kinds = "ns2", nil; return x }(), store.ErrInvalid},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateNoticeSubscription(ctx, tt.s) })
			wantErr(t, "CreateNoticeSubscription", err, tt.want)
		})
	}
	got, err := s.NoticeSubscription(ctx, "ns1")
	wantErr(t, "NoticeSubscription", err, nil)
	if diff := cmp.Diff(sub, got); diff != "" {
		t.Errorf("NoticeSubscription (-want +got):\n%s", diff)
	}
	for _, member := range []string{"", "m1"} {
		list, err := s.NoticeSubscriptions(ctx, "p1", member)
		wantErr(t, "NoticeSubscriptions", err, nil)
		if len(list) != 1 || list[0].ID != "ns1" {
			t.Errorf("NoticeSubscriptions(p1, %q) = %v, want ns1", member, list)
		}
	}
	if list, err := s.NoticeSubscriptions(ctx, "p1", "m2"); err != nil || len(list) != 0 {
		t.Errorf("NoticeSubscriptions(p1, m2) = %v, %v; want none", list, err)
	}
	del := t0.Add(time.Hour)
	for range 2 {
		update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteNoticeSubscription(ctx, "ns1", del) })
		del = del.Add(time.Hour) // a second delete keeps the first time
	}
	got, err = s.NoticeSubscription(ctx, "ns1")
	if err != nil || got.DeletedAt == nil || !got.DeletedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("deleted subscription = %+v, %v; want deleted at %s", got, err, t0.Add(time.Hour))
	}
	if list, err := s.NoticeSubscriptions(ctx, "p1", ""); err != nil || len(list) != 0 {
		t.Errorf("NoticeSubscriptions after delete = %v, %v; want none", list, err)
	}
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteNoticeSubscription(ctx, "nope", del) })
	wantErr(t, "DeleteNoticeSubscription of a missing one", err, store.ErrNotFound)

	// The cursor moves only from the value its writer read.
	if c, err := s.NoticeCursor(ctx, "p1"); err != nil || c != 0 {
		t.Fatalf("NoticeCursor of a new project = %d, %v; want 0", c, err)
	}
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AdvanceNoticeCursor(ctx, "p1", 0, 5) })
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AdvanceNoticeCursor(ctx, "p1", 0, 7) })
	wantErr(t, "AdvanceNoticeCursor from a stale 0", err, store.ErrConflict)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AdvanceNoticeCursor(ctx, "p1", 4, 7) })
	wantErr(t, "AdvanceNoticeCursor from a stale 4", err, store.ErrConflict)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AdvanceNoticeCursor(ctx, "p1", 5, 9) })
	if c, err := s.NoticeCursor(ctx, "p1"); err != nil || c != 9 {
		t.Errorf("NoticeCursor = %d, %v; want 9", c, err)
	}
}

func testNoticeClaims(t *testing.T, h Harness) {
	s := open(t, h)
	sub := seedSubscription(t, s)
	ctx := t.Context()
	n1 := store.Notice{ID: "n1", Subscription: sub.ID, Project: "p1", Kind: "request", Subject: "req_1", Body: []byte(`{"text":"one"}`), CreatedAt: t0, DueAt: t0}
	n2 := store.Notice{ID: "n2", Subscription: sub.ID, Project: "p1", Kind: "card", Subject: "card_1", Body: []byte(`{"text":"two"}`), CreatedAt: t0, DueAt: t0.Add(time.Minute)}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.AddNotice(ctx, n1); err != nil {
			return err
		}
		return tx.AddNotice(ctx, n2)
	})
	err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AddNotice(ctx, n1) })
	wantErr(t, "AddNotice again", err, store.ErrConflict)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		x := n1
		x.ID, x.Subscription = "n9", "nobody"
		return tx.AddNotice(ctx, x)
	})
	wantErr(t, "AddNotice of a missing subscription", err, store.ErrNotFound)

	claim := func(now time.Time, by string) []store.Notice {
		t.Helper()
		var got []store.Notice
		update(t, s, func(ctx context.Context, tx store.Tx) error {
			var err error
			got, err = tx.ClaimNotices(ctx, now, by, now.Add(time.Minute), 10)
			return err
		})
		return got
	}
	// At t0 only n1 is due; a second claimant finds it taken until the claim ends.
	got := claim(t0, "serve-a")
	if len(got) != 1 || got[0].ID != "n1" || got[0].ClaimedBy != "serve-a" {
		t.Fatalf("first claim = %+v, want n1 by serve-a", got)
	}
	if again := claim(t0.Add(time.Second), "serve-b"); len(again) != 0 {
		t.Fatalf("a second claimant took %+v during the first's claim", again)
	}
	// serve-b cannot settle serve-a's claim.
	stolen := got[0]
	stolen.ClaimedBy, stolen.State = "serve-b", "delivered"
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SettleNotice(ctx, stolen) })
	wantErr(t, "SettleNotice by another claimant", err, store.ErrConflict)
	// A failed attempt goes back to pending, due later.
	retry := got[0]
	retry.Attempts, retry.DueAt, retry.LastError = 1, t0.Add(2*time.Minute), "status 500"
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SettleNotice(ctx, retry) })
	got = claim(t0.Add(time.Minute), "serve-b")
	if len(got) != 1 || got[0].ID != "n2" {
		t.Fatalf("claim at t0+1m = %+v, want n2 only", got)
	}
	failed := got[0]
	failedAt := t0.Add(time.Minute)
	failed.State, failed.Attempts, failed.SettledAt, failed.LastError = "failed", 1, &failedAt, "status 404"
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SettleNotice(ctx, failed) })
	if sg, err := s.NoticeSubscription(ctx, sub.ID); err != nil || sg.LastState != "failed" || sg.LastError != "status 404" {
		t.Errorf("subscription after a failure = %+v, %v; want last failed", sg, err)
	}
	got = claim(t0.Add(3*time.Minute), "serve-b")
	if len(got) != 1 || got[0].ID != "n1" || got[0].Attempts != 1 {
		t.Fatalf("claim at t0+3m = %+v, want n1 after one attempt", got)
	}
	done := got[0]
	settled := t0.Add(3 * time.Minute)
	done.State, done.Attempts, done.SettledAt, done.LastError = "delivered", 2, &settled, ""
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SettleNotice(ctx, done) })
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SettleNotice(ctx, done) })
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("settling a delivered notice again = %v, want ErrConflict", err)
	}
	sg, err := s.NoticeSubscription(ctx, sub.ID)
	if err != nil || sg.LastState != "delivered" || sg.LastAt == nil || !sg.LastAt.Equal(settled) {
		t.Errorf("subscription after delivery = %+v, %v; want last delivered at %s", sg, err, settled)
	}
	list, err := s.Notices(ctx, sub.ID, 10)
	wantErr(t, "Notices", err, nil)
	if len(list) != 2 || list[0].ID != "n2" && list[1].ID != "n2" {
		t.Errorf("Notices = %+v, want n1 and n2", list)
	}
	// A deleted subscription's pending notices are not claimed.
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteNoticeSubscription(ctx, sub.ID, t0) })
	if got := claim(t0.Add(time.Hour), "serve-c"); len(got) != 0 {
		t.Errorf("claim after delete = %+v, want none", got)
	}
}
