package eventlog_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/store"
)

// TestCursor_RebuildSaysWhy: a projection whose cursor finds it off its log is rebuilt
// from the log's start, counted ([eventlog.Rebuilds]) and said at WARN (docs/architecture.md,
// "Catch-ups from memory": a rebuild is never silent), and the warning says what the
// cursor found, each case with its own cause to look for: events applied inside a
// transaction that the log lacks (a failed COMMIT), a projection its part made at a seq
// ([eventlog.Cursor.Start], as a Board built from the store's tables) that the log's next
// event does not link to, or a log that changed under events seen committed. Each
// warning names the seq where the cursor found it.
func TestCursor_RebuildSaysWhy(t *testing.T) {
	const (
		inTx      = "applied inside a transaction that its log lacks (a write whose COMMIT failed)"
		atStart   = "its part made at a seq of the log"
		committed = "the log changed under it"
	)
	cases := []struct {
		name string
		// diverge leaves p off the log of mem, a remembering store over st; open opens
		// another store of the same backend.
		diverge func(t *testing.T, st, mem store.Store, open func(*testing.T) store.Store, p *projection)
		want    string // the warning's cause
		seq     int64  // the seq it names
	}{{
		name: "events applied in a transaction whose COMMIT failed",
		diverge: func(t *testing.T, _, mem store.Store, _ func(*testing.T) store.Store, p *projection) {
			ctx := t.Context()
			appendN(t, mem, 2)
			if err := p.cur.CatchUp(ctx, mem, project, p.apply); err != nil {
				t.Fatal(err)
			}
			err := mem.Update(ctx, func(tx store.Tx) error {
				if err := eventlog.Append(ctx, tx, project, "system", time.Now().UTC(), testEvent{typ: lostType}); err != nil {
					return err
				}
				return p.cur.CatchUp(ctx, tx, project, p.apply)
			})
			if err == nil {
				t.Fatal("an Update whose COMMIT fails returned nil")
			}
		},
		want: inTx, seq: 3,
	}, {
		name: "a projection made at a seq the log does not link to",
		diverge: func(t *testing.T, st, mem store.Store, _ func(*testing.T) store.Store, p *projection) {
			appendN(t, mem, 3)
			p.applied = slices.Clone(allEvents(t, st)[:2])
			p.cur.Start(2, store.Hash{9})
		},
		want: atStart, seq: 2,
	}, {
		// Started at a seq of the other log, then its next event applied as committed:
		// what the cursor holds last was seen committed, not made by its part.
		name: "a log changed under events seen committed",
		diverge: func(t *testing.T, _, mem store.Store, open func(*testing.T) store.Store, p *projection) {
			ctx := t.Context()
			other := open(t)
			appendN(t, other, 2)
			first := allEvents(t, other)[0]
			p.applied = []store.Event{first}
			p.cur.Start(1, first.Hash)
			if err := p.cur.CatchUp(ctx, other, project, p.apply); err != nil {
				t.Fatal(err)
			}
			appendN(t, mem, 3)
		},
		want: committed, seq: 2,
	}}
	for _, b := range failingBackends {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				st := b.open(t)
				var logged bytes.Buffer
				mem := eventlog.Remember(st, slog.New(slog.NewTextHandler(&logged, nil)))
				p := newProjection()
				tc.diverge(t, st, mem, b.open, p)
				if err := p.cur.CatchUp(t.Context(), mem, project, p.apply); err != nil {
					t.Fatalf("catch up: %v", err)
				}
				if want := allEvents(t, st); !slices.EqualFunc(p.applied, want, sameEvent) || p.resets != 1 {
					t.Fatalf("the projection holds %s after %d resets, want the log %s after 1", seqs(p.applied), p.resets, seqs(want))
				}
				out := logged.String()
				if n := eventlog.Rebuilds(mem); n != 1 || strings.Count(out, "level=WARN") != 1 {
					t.Fatalf("after one rebuild Rebuilds = %d and the log reads %q; want 1 and one warning", n, out)
				}
				for _, cause := range []string{inTx, atStart, committed} {
					if said, want := strings.Contains(out, cause), cause == tc.want; said != want {
						t.Errorf("the warning %q says %q: %v, want %v", out, cause, said, want)
					}
				}
				if want := fmt.Sprintf(" seq=%d ", tc.seq); !strings.Contains(out, want) {
					t.Errorf("the warning %q does not name%s", out, want)
				}
			})
		}
	}
}
