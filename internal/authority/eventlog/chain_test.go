package eventlog_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestCursor_RefusesAnEventThatDoesNotLink checks the cursor's hash check on its own: an
// event whose sequence number follows the cursor but whose PrevHash is not the hash of
// the event the cursor applied last is not applied. The projection below applied event 1
// of one log and is then caught up on another log whose event 1 differs: its event 2 has
// the right number and the wrong link. A cursor with Reset rebuilds from the second log's
// start; one without refuses with ErrDiverged (docs/architecture.md, the projections'
// cursor).
func TestCursor_RefusesAnEventThatDoesNotLink(t *testing.T) {
	ctx := t.Context()
	open := func(ns ...int) store.Store {
		t.Helper()
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		createProject(t, st)
		for _, n := range ns {
			if err := st.Update(ctx, func(tx store.Tx) error {
				return eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: "test.appended", N: n})
			}); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	first, other := open(1), open(2, 3)

	p := newProjection()
	if err := p.cur.CatchUp(ctx, first, project, p.apply); err != nil {
		t.Fatal(err)
	}
	if err := p.cur.CatchUp(ctx, other, project, p.apply); err != nil {
		t.Fatalf("catch up on a log that does not link: %v", err)
	}
	if p.resets != 1 {
		t.Errorf("the projection was reset %d times, want 1: event 2 does not link to the event 1 it applied", p.resets)
	}
	if len(p.applied) != 2 || string(p.applied[0].Data) != `{"n":2}` || string(p.applied[1].Data) != `{"n":3}` {
		var got []string
		for _, e := range p.applied {
			got = append(got, string(e.Data))
		}
		t.Errorf("the projection holds %q, want exactly the second log's two events", got)
	}

	var bare eventlog.Cursor
	none := func(store.Event) error { return nil }
	if err := bare.CatchUp(ctx, first, project, none); err != nil {
		t.Fatal(err)
	}
	if err := bare.CatchUp(ctx, other, project, none); !errors.Is(err, eventlog.ErrDiverged) {
		t.Fatalf("a cursor without Reset caught up across a broken link: %v, want %v", err, eventlog.ErrDiverged)
	}
}
