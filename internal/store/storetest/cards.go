package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

// testCards: a card is recorded open for an existing delegate, is selected by project,
// delegate and state, and closes once.
func testCards(t *testing.T, h Harness) {
	s := open(t, h)
	seedProject(t, s)
	ctx := t.Context()
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.CreateDelegate(ctx, store.Delegate{ID: "dlg1", Member: "m1", Project: "p1", Name: "asst", TokenDigest: []byte("g1"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	})
	c1 := store.Card{ID: "crd1", Project: "p1", Delegate: "dlg1", State: "open", CreatedAt: t0, Record: []byte(`{"id":"crd1"}`)}
	c2 := store.Card{ID: "crd2", Project: "p1", Delegate: "dlg1", State: "open", CreatedAt: t0.Add(time.Second), Record: []byte(`{"id":"crd2"}`)}
	update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.CreateCard(ctx, c1); err != nil {
			return err
		}
		return tx.CreateCard(ctx, c2)
	})
	refused := []struct {
		name string
		c    store.Card
		want error
	}{
		{"an id in use", store.Card{ID: "crd1", Project: "p1", Delegate: "dlg1", State: "open", CreatedAt: t0, Record: []byte("{}")}, store.ErrConflict},
		{"a missing delegate", store.Card{ID: "crd3", Project: "p1", Delegate: "nobody", State: "open", CreatedAt: t0, Record: []byte("{}")}, store.ErrNotFound},
		{"a closed state", store.Card{ID: "crd3", Project: "p1", Delegate: "dlg1", State: "void", CreatedAt: t0, Record: []byte("{}")}, store.ErrInvalid},
		{"no record", store.Card{ID: "crd3", Project: "p1", Delegate: "dlg1", State: "open", CreatedAt: t0}, store.ErrInvalid},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CreateCard(ctx, tt.c) })
			wantErr(t, "CreateCard", err, tt.want)
		})
	}
	got, err := s.Card(ctx, "crd1")
	wantErr(t, "Card", err, nil)
	if diff := cmp.Diff(c1, got); diff != "" {
		t.Errorf("Card (-want +got):\n%s", diff)
	}
	_, err = s.Card(ctx, "nope")
	wantErr(t, "Card(unknown)", err, store.ErrNotFound)

	closed := c1
	closed.State, closed.Record = "confirmed", []byte(`{"id":"crd1","state":"confirmed"}`)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCard(ctx, closed, "open") })
	again := closed
	again.State = "void"
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCard(ctx, again, "open") })
	wantErr(t, "UpdateCard of a closed card", err, store.ErrConflict)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateCard(ctx, store.Card{ID: "nope", State: "void", Record: []byte("{}")}, "open")
	})
	wantErr(t, "UpdateCard(unknown)", err, store.ErrNotFound)
	err = updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateCard(ctx, store.Card{ID: "crd2", State: "open", Record: []byte("{}")}, "open")
	})
	wantErr(t, "UpdateCard to open", err, store.ErrInvalid)

	for _, tt := range []struct {
		name string
		f    store.CardFilter
		want []string
	}{
		{"all", store.CardFilter{}, []string{"crd1", "crd2"}},
		{"open", store.CardFilter{Project: "p1", State: "open"}, []string{"crd2"}},
		{"confirmed of the delegate", store.CardFilter{Delegate: "dlg1", State: "confirmed"}, []string{"crd1"}},
		{"another project", store.CardFilter{Project: "p2"}, nil},
	} {
		t.Run("Cards/"+tt.name, func(t *testing.T) {
			cs, err := s.Cards(ctx, tt.f)
			wantErr(t, "Cards", err, nil)
			var ids []string
			for _, c := range cs {
				ids = append(ids, c.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("Cards(%+v) (-want +got):\n%s", tt.f, diff)
			}
		})
	}
	settled := closed
	settled.Record = []byte(`{"id":"crd1","state":"confirmed","outcome":{}}`)
	update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCard(ctx, settled, "confirmed") })
	if got, err := s.Card(ctx, "crd1"); err != nil || string(got.Record) != string(settled.Record) || got.State != "confirmed" {
		t.Errorf("Card after UpdateCard = %+v, %v; want the settled record", got, err)
	}
}
