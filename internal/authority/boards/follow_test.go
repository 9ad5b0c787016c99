package boards

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

const testProject contract.ProjectID = "p"

// openLog opens a SQLite store in a directory of its own, with testProject created.
func openLog(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Update(t.Context(), func(tx store.Tx) error {
		return tx.CreateProject(t.Context(), store.Project{ID: string(testProject), Name: "p", CreatedAt: time.Now().UTC()})
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

// assertSeen commits the fact seen(x) to testProject's Board through c's write sequence.
func assertSeen(t *testing.T, c *Cache, x string) {
	t.Helper()
	const by contract.Principal = "member:ada"
	err := c.Write(t.Context(), testProject, "assert "+x, func(w *Write) error {
		res, err := w.Board().ApplyBatch(board.Author{Principal: by, Tier: contract.TierAttested}, contract.Batch{Operations: []contract.Operation{
			{Op: contract.OpAssertFact, Atom: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": contract.StringValue(x)}}}}})
		if err != nil {
			return err
		}
		ch := Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}
		return w.Commit(t.Context(), &ch, by, time.Now().UTC(), "fact", nil, nil)
	})
	if err != nil {
		t.Fatalf("assert %s: %v", x, err)
	}
}

// seen lists the x of every seen fact on c's Board of testProject.
func seen(t *testing.T, c *Cache) []string {
	t.Helper()
	var xs []string
	if err := c.View(t.Context(), testProject, func(b *board.Board) error {
		for _, n := range b.Nodes() {
			xs = append(xs, n.Atom.Args["x"].Str())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return xs
}

// TestCache_RefusesAChangeThatDoesNotLink checks the Board's hash check on its own (the
// cursor of follow.go, as eventlog.Cursor's): a Board change whose event has the next
// sequence number but does not link to the last event the Board applied is never
// applied; the Board is built again from the store. The Board below applied its own
// write, seen(a), at events 1 and 2 of one log, and is then caught up on another log
// whose events 1 and 2 are seen(b) and whose events 3 and 4 are seen(c): event 3 has the
// right number and the wrong link. Applied, it would leave seen(a) beside seen(c). The
// Driver's cursor finds it, and its rebuild is counted and said at WARN as what it is, a
// Board made at a seq (its own commit) that the log does not link to, not a failed
// COMMIT (eventlog.Remember).
func TestCache_RefusesAChangeThatDoesNotLink(t *testing.T) {
	first, other := openLog(t), openLog(t)
	now := func() time.Time { return time.Now().UTC() }
	c := New(first, slog.New(slog.DiscardHandler), now, nil, 0)
	assertSeen(t, c, "a")
	if got := seen(t, c); len(got) != 1 || got[0] != "a" {
		t.Fatalf("the Board holds %q, want [a]", got)
	}
	writer := New(other, slog.New(slog.DiscardHandler), now, nil, 0)
	assertSeen(t, writer, "b")
	assertSeen(t, writer, "c")

	builds := c.Builds(testProject)
	var logged bytes.Buffer
	c.store = eventlog.Remember(other, slog.New(slog.NewTextHandler(&logged, nil)))
	got := seen(t, c)
	if len(got) != 2 || got[0] != "b" || got[1] != "c" {
		t.Errorf("the Board holds %q, want exactly the other log's [b c]", got)
	}
	if n := c.Builds(testProject) - builds; n != 1 {
		t.Errorf("the Board was built %d times, want once: event 3 does not link to the event 2 it applied", n)
	}
	out := logged.String()
	if n := eventlog.Rebuilds(c.store); n != 1 || !strings.Contains(out, "level=WARN") ||
		!strings.Contains(out, "its part made at a seq of the log") || !strings.Contains(out, " seq=2 ") || strings.Contains(out, "COMMIT") {
		t.Errorf("Rebuilds = %d and the log reads %q; want 1 and a warning of a Board made at seq 2 that the log does not link to", n, out)
	}
}

// TestCache_FollowsOnceLinked: a Board built on first use, whose head was read once
// before its nodes, may hold a change past that head, so it applies no Board change
// until a read of the head finds none since (then it is the log there) or it is built
// again with its head read on both sides of the nodes; from then on another instance's
// changes are applied from their records, with no build (follow.go).
func TestCache_FollowsOnceLinked(t *testing.T) {
	st := openLog(t)
	now := func() time.Time { return time.Now().UTC() }
	writer := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	c := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	steps := []struct {
		write  string // another instance's fact, "" for none
		want   []string
		builds int
	}{
		{"a", []string{"a"}, 1},      // built on first use
		{"b", []string{"a", "b"}, 2}, // not linked yet: built again, its head read twice
		{"c", []string{"a", "b", "c"}, 2},
		{"", []string{"a", "b", "c"}, 2},
		{"d", []string{"a", "b", "c", "d"}, 2},
	}
	for _, s := range steps {
		if s.write != "" {
			assertSeen(t, writer, s.write)
		}
		got := seen(t, c)
		if len(got) != len(s.want) {
			t.Fatalf("after %q the Board holds %q, want %q", s.write, got, s.want)
		}
		for i := range got {
			if got[i] != s.want[i] {
				t.Fatalf("after %q the Board holds %q, want %q", s.write, got, s.want)
			}
		}
		if n := c.Builds(testProject); n != s.builds {
			t.Errorf("after %q the Board was built %d times, want %d", s.write, n, s.builds)
		}
	}

	// A Board first read with no change since its build is linked by that read.
	d := New(st, slog.New(slog.DiscardHandler), now, nil, 0)
	seen(t, d)
	seen(t, d)
	assertSeen(t, writer, "e")
	if got := seen(t, d); len(got) != 5 || d.Builds(testProject) != 1 {
		t.Errorf("the Board holds %q after %d builds, want 5 facts after 1", got, d.Builds(testProject))
	}
}
