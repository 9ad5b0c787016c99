package boards

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// counted is a State of another part of the Board's log: it counts the events applied.
type counted struct{ n int }

func (c *counted) Apply(store.Event) error { c.n++; return nil }

// TestCache_WriteHoldsItsBoard: the Board shares its project's log with other parts
// (one lock, one cursor: boardPart), so a step of a Board write may catch the log up
// through another part ([eventlog.Along]) after the write changed its Board in memory,
// as an admission catches the operation ledger up inside its transaction. Another
// instance's Board change that catch-up reads is not applied to the Board the write
// holds: the write's check under the head lock finds it, and the write runs again on the
// Board with it, so it decides on the Board it commits on. Applied there, the write
// would commit at once a decision taken without it.
func TestCache_WriteHoldsItsBoard(t *testing.T) {
	ctx := t.Context()
	st := openLog(t)
	now := func() time.Time { return time.Now().UTC() }
	l := eventlog.NewLog(st)
	c := Join(l, slog.New(slog.DiscardHandler), now, nil, 0)
	other := eventlog.Join(l, func() *counted { return &counted{} })
	writer := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	assertSeen(t, c, "a")

	const by contract.Principal = "member:ada"
	var decidedOn [][]string // the facts each attempt's Board held when it decided
	err := c.Write(ctx, testProject, "assert mine", func(w *Write) error {
		var xs []string
		for _, n := range w.Board().Nodes() {
			xs = append(xs, n.Atom.Args["x"].Str())
		}
		decidedOn = append(decidedOn, xs)
		res, err := w.Board().ApplyBatch(board.Author{Principal: by, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{
			{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue("mine")}}}}})
		if err != nil {
			return err
		}
		if len(decidedOn) == 1 {
			assertSeen(t, writer, "theirs") // another instance, between the decision and the commit
			head, err := st.Head(ctx, string(testProject))
			if err != nil {
				return err
			}
			if _, err := eventlog.Along(w.Held(), other).CatchUpTo(ctx, st, head.Seq); err != nil {
				return err
			}
		}
		ch := Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}
		return w.Commit(ctx, &ch, by, now(), "fact", nil, nil)
	})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if len(decidedOn) != 2 || !slices.Contains(decidedOn[1], "theirs") {
		t.Errorf("the write decided on %q, want twice, the second time on a Board with theirs", decidedOn)
	}
	got, want := seen(t, c), seen(t, New(st, slog.New(slog.DiscardHandler), now, nil, 0))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(got) != 3 {
		t.Errorf("the Board holds %q, a build from the store %q; want the same three facts", got, want)
	}
}

// TestCache_WriteSettlesItsBoard: a write that commits no change of its Board, while a
// catch-up of another part of the log passed another instance's Board change that the
// write held from its Board (boardPart), applies that change to the Board once it ends
// (settleLocked), from its record: the Board shows it, with no build.
func TestCache_WriteSettlesItsBoard(t *testing.T) {
	ctx := t.Context()
	st := openLog(t)
	now := func() time.Time { return time.Now().UTC() }
	l := eventlog.NewLog(st)
	c := Join(l, slog.New(slog.DiscardHandler), now, nil, 0)
	other := eventlog.Join(l, func() *counted { return &counted{} })
	writer := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	assertSeen(t, c, "a")
	builds := c.Builds(testProject)
	err := c.Write(ctx, testProject, "read only", func(w *Write) error {
		assertSeen(t, writer, "theirs")
		head, err := st.Head(ctx, string(testProject))
		if err != nil {
			return err
		}
		_, err = eventlog.Along(w.Held(), other).CatchUpTo(ctx, st, head.Seq)
		return err
	})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	got := seen(t, c)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "theirs"}) {
		t.Errorf("the Board holds %q, want [a theirs]", got)
	}
	if n := c.Builds(testProject) - builds; n != 0 {
		t.Errorf("the Board was built %d times, want 0: the change held from it is applied from its record", n)
	}
}

// TestCache_BuiltLinkedAfterARebuild: a Board the State lost to a rebuild of every part's
// State (the cursor found the log's next event does not link) is built again as after a
// failed commit, its head read on both sides of the nodes, so it is linked at once and
// the next change another instance makes is applied from its record, with no build more.
func TestCache_BuiltLinkedAfterARebuild(t *testing.T) {
	first, other := openLog(t), openLog(t)
	now := func() time.Time { return time.Now().UTC() }
	c := New(first, slog.New(slog.DiscardHandler), now, nil, 0)
	assertSeen(t, c, "a")
	writer := New(other, slog.New(slog.DiscardHandler), now, nil, 0)
	assertSeen(t, writer, "b")
	assertSeen(t, writer, "c")
	c.store = other
	seen(t, c) // event 3 does not link to the event 2 c applied: every State fresh, built again
	builds := c.Builds(testProject)
	assertSeen(t, writer, "d")
	got := seen(t, c)
	slices.Sort(got)
	if !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("the Board holds %q, want [b c d]", got)
	}
	if n := c.Builds(testProject) - builds; n != 0 {
		t.Errorf("the Board was built %d times for the next change, want 0: built again linked, it applies it from its record", n)
	}
}
