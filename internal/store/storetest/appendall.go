package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/store"
)

// appendAllEvents returns test events from..to of project, every tenth with data kept as
// a blob, so a batch crosses the store's chunks of rows and mixes inline and blob data.
func appendAllEvents(project string, from, to int) []store.NewEvent {
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", store.BlobThreshold) + `"}`)
	var nes []store.NewEvent
	for i := from; i <= to; i++ {
		ne := newEvent(project, i)
		if i%10 == 0 {
			ne.Data = big
		}
		nes = append(nes, ne)
	}
	return nes
}

// testAppendAll checks that AppendAll appends exactly what that many Appends would: the
// same events, hashes included, read back alike, a chain that verifies, and after it a
// head that the transaction and the next one continue from.
func testAppendAll(t *testing.T, h Harness) {
	batched, single := open(t, h), open(t, h)
	nes := appendAllEvents("p1", 3, 152) // 150 events: more than two chunks of rows
	appendN(t, batched, "p1", 2)
	appendN(t, single, "p1", 2)
	var got []store.Event
	update(t, batched, func(ctx context.Context, tx store.Tx) error {
		es, err := tx.AppendAll(ctx, nes)
		if err != nil {
			return err
		}
		got = es
		if head, err := tx.LockHead(ctx, "p1"); err != nil || head.Seq != 152 || head.Hash != es[len(es)-1].Hash {
			return fmt.Errorf("LockHead after AppendAll = %v, %v; want seq 152 and the last event's hash", head, err)
		}
		// An Append after it, in the same transaction, continues the chain.
		e, err := tx.Append(ctx, newEvent("p1", 153))
		if err != nil {
			return err
		}
		got = append(got, e)
		if e.Seq != 153 || e.PrevHash != es[len(es)-1].Hash {
			return fmt.Errorf("an Append after AppendAll = seq %d prev %s, want seq 153 after the batch's last", e.Seq, e.PrevHash)
		}
		return nil
	})
	update(t, single, func(ctx context.Context, tx store.Tx) error {
		for _, ne := range append(nes, newEvent("p1", 153)) {
			if _, err := tx.Append(ctx, ne); err != nil {
				return err
			}
		}
		return nil
	})
	want := allEvents(t, single, "p1")
	if diff := cmp.Diff(want[2:], got); diff != "" {
		t.Fatalf("AppendAll returned other events than Appends store (-appends +appendall):\n%s", diff)
	}
	if diff := cmp.Diff(want, allEvents(t, batched, "p1")); diff != "" {
		t.Fatalf("the log after AppendAll differs from the log after Appends (-appends +appendall):\n%s", diff)
	}
	if head, err := batched.Verify(t.Context(), "p1"); err != nil || head.Seq != 153 {
		t.Fatalf("Verify after AppendAll = %v, %v; want head seq 153", head, err)
	}
	b, err := batched.Blob(t.Context(), store.DataHash(nes[7].Data))
	wantErr(t, "Blob of a batched event's data", err, nil)
	if string(b) != string(nes[7].Data) {
		t.Errorf("Blob = %d bytes, want the %d bytes of the event's data", len(b), len(nes[7].Data))
	}
	// The next transaction continues from the batch's end.
	if evs := appendN(t, batched, "p2", 1); evs[0].Seq != 1 {
		t.Errorf("an append to another log = seq %d, want 1", evs[0].Seq)
	}
	update(t, batched, func(ctx context.Context, tx store.Tx) error {
		es, err := tx.AppendAll(ctx, []store.NewEvent{newEvent("p1", 154), {Project: "p1", Type: "test.appended", At: t0, Data: json.RawMessage(`{}`)}})
		if err != nil {
			return err
		}
		if es[0].Seq != 154 || es[1].Seq != 155 || es[1].ID == "" {
			return fmt.Errorf("AppendAll in the next transaction = seqs %d, %d, id %q; want 154, 155 and a minted id", es[0].Seq, es[1].Seq, es[1].ID)
		}
		return nil
	})
	t.Run("empty", func(t *testing.T) {
		update(t, batched, func(ctx context.Context, tx store.Tx) error {
			es, err := tx.AppendAll(ctx, nil)
			if err != nil || len(es) != 0 {
				return fmt.Errorf("AppendAll(nil) = %d events, %v; want none and no error", len(es), err)
			}
			return nil
		})
		if head, err := batched.Verify(t.Context(), "p1"); err != nil || head.Seq != 155 {
			t.Fatalf("Verify after an empty AppendAll = %v, %v; want head seq 155", head, err)
		}
	})
}

// testAppendAllRefused checks that a batch the store refuses appends none of its events:
// the log, its head and its chain stay as they were, and the next append follows them.
func testAppendAllRefused(t *testing.T, h Harness) {
	s := open(t, h)
	appendN(t, s, "p1", 2)
	before := allEvents(t, s, "p1")
	batch := func(edit func([]store.NewEvent) []store.NewEvent) []store.NewEvent {
		return edit(appendAllEvents("p1", 3, 80))
	}
	tests := []struct {
		name string
		nes  []store.NewEvent
		want error
	}{
		{"id in the log", batch(func(n []store.NewEvent) []store.NewEvent { n[70].ID = "ev-1"; return n }), store.ErrConflict},
		{"id twice in the batch", batch(func(n []store.NewEvent) []store.NewEvent { n[75].ID = n[3].ID; return n }), store.ErrConflict},
		{"id twice in one chunk", batch(func(n []store.NewEvent) []store.NewEvent { n[1].ID = n[0].ID; return n }), store.ErrConflict},
		{"data null", batch(func(n []store.NewEvent) []store.NewEvent { n[40].Data = json.RawMessage(`null`); return n }), store.ErrNoEventData},
		{"no type", batch(func(n []store.NewEvent) []store.NewEvent { n[77].Type = ""; return n }), store.ErrInvalid},
		{"two projects", batch(func(n []store.NewEvent) []store.NewEvent { n[5].Project = "p2"; return n }), store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := updateErr(t, s, func(ctx context.Context, tx store.Tx) error {
				_, err := tx.AppendAll(ctx, tt.nes)
				return err
			})
			wantErr(t, "AppendAll", err, tt.want)
			if diff := cmp.Diff(before, allEvents(t, s, "p1")); diff != "" {
				t.Fatalf("the log after a refused AppendAll (-before +after):\n%s", diff)
			}
			if evs := allEvents(t, s, "p2"); len(evs) != 0 {
				t.Fatalf("a refused AppendAll left %d events in another log", len(evs))
			}
			if head, err := s.Verify(t.Context(), "p1"); err != nil || head.Seq != 2 {
				t.Fatalf("Verify after a refused AppendAll = %v, %v; want head seq 2", head, err)
			}
		})
	}
	var e store.Event
	update(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		e, err = tx.Append(ctx, newEvent("p1", 3))
		return err
	})
	if e.Seq != 3 || e.PrevHash != before[1].Hash {
		t.Fatalf("Append after refused batches = seq %d prev %s, want seq 3 after event 2", e.Seq, e.PrevHash)
	}
}

// testAppendAllConcurrent runs batches from two instances on one database: the log
// stays one chain without gaps, each batch's events next to each other.
func testAppendAllConcurrent(t *testing.T, h Harness) {
	const writers, each, size = 6, 10, 3
	stores := concurrentWrites(t, h, writers, each, func(tx store.Tx, w, i int) error {
		var nes []store.NewEvent
		for k := range size {
			ne := newEvent("p1", k)
			ne.ID = fmt.Sprintf("w%d-%d-%d", w, i, k)
			nes = append(nes, ne)
		}
		es, err := tx.AppendAll(t.Context(), nes)
		if err == nil && (es[1].Seq != es[0].Seq+1 || es[2].Seq != es[0].Seq+2) {
			err = fmt.Errorf("a batch appended at seqs %d, %d, %d", es[0].Seq, es[1].Seq, es[2].Seq)
		}
		return err
	})
	evs := allEvents(t, stores[1], "p1")
	if len(evs) != writers*each*size {
		t.Fatalf("got %d events, want %d", len(evs), writers*each*size)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: seqs must be 1, 2, 3… without gaps", i+1, e.Seq)
		}
		if k := i % size; !strings.HasSuffix(e.ID, fmt.Sprintf("-%d", k)) {
			t.Fatalf("event %d is %s: a batch's events must be next to each other", e.Seq, e.ID)
		}
	}
	if head, err := stores[0].Verify(t.Context(), "p1"); err != nil || head.Seq != writers*each*size {
		t.Fatalf("Verify = %v, %v; want head seq %d", head, err, writers*each*size)
	}
}
