package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

func testDelegates(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	expires := t0.Add(time.Hour)
	d1 := store.Delegate{ID: "dlg1", Member: "m1", Project: "p1", Name: "asst", TokenDigest: []byte("g1"), CreatedAt: t0, ExpiresAt: expires}
	d2 := store.Delegate{ID: "dlg2", Member: "m1", Project: "p1", Name: "other", TokenDigest: []byte("g2"), CreatedAt: t0, ExpiresAt: expires}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateDelegate(ctx, d1); err != nil {
			return err
		}
		return tx.CreateDelegate(ctx, d2)
	})
	refused := []struct {
		name string
		d    store.Delegate
		want error
	}{
		{"a name in use", store.Delegate{ID: "dlg3", Member: "m1", Project: "p1", Name: "asst", TokenDigest: []byte("g3"), CreatedAt: t0, ExpiresAt: expires}, store.ErrConflict},
		{"a digest in use", store.Delegate{ID: "dlg3", Member: "m1", Project: "p1", Name: "new", TokenDigest: []byte("g1"), CreatedAt: t0, ExpiresAt: expires}, store.ErrConflict},
		{"a missing member", store.Delegate{ID: "dlg3", Member: "nobody", Project: "p1", Name: "new", TokenDigest: []byte("g3"), CreatedAt: t0, ExpiresAt: expires}, store.ErrNotFound},
		{"no name", store.Delegate{ID: "dlg3", Member: "m1", Project: "p1", TokenDigest: []byte("g3"), CreatedAt: t0, ExpiresAt: expires}, store.ErrInvalid},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateDelegate(ctx, tt.d) })
			wantErr(t, "CreateDelegate", err, tt.want)
		})
	}
	got, err := s.DelegateByToken(ctx, []byte("g1"), t0.Add(time.Minute))
	wantErr(t, "DelegateByToken", err, nil)
	if diff := cmp.Diff(d1, got); diff != "" {
		t.Errorf("DelegateByToken (-want +got):\n%s", diff)
	}
	_, err = s.DelegateByToken(ctx, []byte("g1"), expires)
	wantErr(t, "DelegateByToken at its expiry", err, store.ErrExpired)
	_, err = s.DelegateByToken(ctx, []byte("nope"), t0)
	wantErr(t, "DelegateByToken(unknown)", err, store.ErrNotFound)

	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeDelegate(ctx, "m2", "dlg1", t0) })
	wantErr(t, "RevokeDelegate of another member's", err, store.ErrNotFound)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeDelegate(ctx, "m1", "dlg1", t0) })
	_, err = s.DelegateByToken(ctx, []byte("g1"), t0)
	wantErr(t, "DelegateByToken after RevokeDelegate", err, store.ErrRevoked)
	_, err = s.DelegateByToken(ctx, []byte("g2"), t0)
	wantErr(t, "DelegateByToken of the other", err, nil)
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.RevokeDelegates(ctx, "m1", t0.Add(time.Second))
	})
	ds, err := s.Delegates(ctx, "m1")
	wantErr(t, "Delegates", err, nil)
	if len(ds) != 2 || ds[0].RevokedAt == nil || !ds[0].RevokedAt.Equal(t0) || ds[1].RevokedAt == nil {
		t.Errorf("Delegates after RevokeDelegates = %+v; want both revoked, dlg1 at its first revocation", ds)
	}

	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.CreateSession(ctx, store.Session{TokenDigest: []byte("s1"), MemberID: "m1", CreatedAt: t0, ExpiresAt: expires})
	})
	for _, c := range []struct {
		now  time.Time
		want int
	}{{t0, 1}, {expires, 0}} {
		n, err := s.LiveSessions(ctx, "m1", c.now)
		if err != nil || n != c.want {
			t.Errorf("LiveSessions(%v) = %d, %v; want %d", c.now, n, err, c.want)
		}
	}
}
