package authority_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// sharedBackends opens two store instances on one fresh database, as two `docket serve`
// processes would: SQLite always, PostgreSQL when DOCKET_TEST_POSTGRES names a server.
var sharedBackends = []struct {
	name string
	open func(t *testing.T) (store.Store, store.Store)
}{
	{"sqlite", func(t *testing.T) (store.Store, store.Store) {
		path := filepath.Join(t.TempDir(), "docket.db")
		return openSQLite(t, path), openSQLite(t, path)
	}},
	{"postgres", func(t *testing.T) (store.Store, store.Store) {
		dsn := authoritytest.PostgresDSN(t)
		return openPostgres(t, dsn), openPostgres(t, dsn)
	}},
}

func openSQLite(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openPostgres(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// pair is two authorities on one database, the first initialized and holding the grant
// capability and a roster fact of each user, the second built on the second store
// instance after that.
type pair struct {
	a, b   *authority.Authority
	admin  identity.Caller
	stores [2]store.Store // a's and b's
	key    identity.Key
}

func newPair(t *testing.T, open func(t *testing.T) (store.Store, store.Store), users ...string) pair {
	t.Helper()
	s1, s2 := open(t)
	f := newFixtureOn(t, s1)
	up := authoritytest.ReadPackage(t, "testdata/grant")
	if _, err := f.a.InstallCapability(t.Context(), f.admin, "default", up); err != nil {
		t.Fatalf("InstallCapability: %v", err)
	}
	for _, u := range users {
		if err := f.a.Commit(t.Context(), "default", f.admin.Principal(), assertRoster(u, "reader")); err != nil {
			t.Fatalf("roster of %s: %v", u, err)
		}
	}
	b := newAuthorityOn(t, s2, f.key)
	if err := b.Restore(t.Context()); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return pair{a: f.a, b: b, admin: f.admin, stores: [2]store.Store{s1, s2}, key: f.key}
}

// openAccessCase opens the access Case of user through Commit.
func openAccessCase(by contract.Principal, user string) func(b *board.Board) (boards.Change, error) {
	return func(b *board.Board) (boards.Change, error) {
		cs, changes, err := b.OpenCase(by, "access", contract.Args{"user": contract.StringValue(user)}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		if err != nil {
			return boards.Change{}, err
		}
		return boards.Change{Nodes: changes, Cases: []contract.Case{cs}, Event: event.CaseOpenedData{Case: cs}}, nil
	}
}

// boardState is what a Board shows, for comparing two instances' Boards.
func boardState(t *testing.T, a *authority.Authority) ([]contract.Node, []contract.Case) {
	t.Helper()
	var nodes []contract.Node
	var cases []contract.Case
	if err := a.View(t.Context(), "default", func(b *board.Board) error {
		nodes, cases = b.Nodes(), b.Cases()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return nodes, cases
}

func TestAuthority_SharedStore(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			p := newPair(t, be.open, "ada")
			ctx := t.Context()
			by := p.admin.Principal()

			// B built its Board before A opened the Case; it must see it, not open another.
			if err := p.a.Commit(ctx, "default", by, openAccessCase(by, "ada")); err != nil {
				t.Fatalf("A opens the Case: %v", err)
			}
			wantCode(t, p.b.Commit(ctx, "default", by, openAccessCase(by, "ada")), contract.CodeCaseExists)

			// B applies a batch after A's; both Boards end the same.
			if err := p.a.Commit(ctx, "default", by, assertRoster("carol", "admin")); err != nil {
				t.Fatalf("A's batch: %v", err)
			}
			if err := p.b.Commit(ctx, "default", by, assertRoster("dave", "reader")); err != nil {
				t.Fatalf("B's batch: %v", err)
			}
			nodesA, casesA := boardState(t, p.a)
			nodesB, casesB := boardState(t, p.b)
			if diff := cmp.Diff(nodesA, nodesB, valueEqual); diff != "" {
				t.Errorf("nodes differ between instances (-A +B):\n%s", diff)
			}
			if diff := cmp.Diff(casesA, casesB, valueEqual); diff != "" {
				t.Errorf("cases differ between instances (-A +B):\n%s", diff)
			}
			if len(casesA) != 1 || countPredicate(nodesA, "roster") != 3 {
				t.Errorf("Board holds %d Cases and %d roster facts, want 1 and 3", len(casesA), countPredicate(nodesA, "roster"))
			}
		})
	}
}

func TestAuthority_SharedStoreConcurrentOpen(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			const users = 8
			var names []string
			for i := range users {
				names = append(names, string(rune('a'+i)))
			}
			p := newPair(t, be.open, names...)
			by := p.admin.Principal()
			var wg sync.WaitGroup
			errs := make([][2]error, users)
			for i := range users {
				user := names[i]
				for j, a := range []*authority.Authority{p.a, p.b} {
					wg.Go(func() { errs[i][j] = a.Commit(t.Context(), "default", by, openAccessCase(by, user)) })
				}
			}
			wg.Wait()
			for i, e := range errs {
				opened := 0
				for _, err := range e {
					if err == nil {
						opened++
						continue
					}
					if !isCode(err, contract.CodeCaseExists) && !isCode(err, contract.CodeUnavailable) {
						t.Errorf("user %d: unexpected refusal %v", i, err)
					}
				}
				if opened > 1 {
					t.Errorf("user %d: both instances opened a Case", i)
				}
			}
			for _, a := range []*authority.Authority{p.a, p.b} {
				_, cases := boardState(t, a)
				keys := map[string]int{}
				for _, c := range cases {
					keys[c.BusinessKey["user"].Str()]++
				}
				for k, n := range keys {
					if n != 1 {
						t.Errorf("the Board holds %d Cases for user %s, want 1", n, k)
					}
				}
			}
		})
	}
}

// TestAuthority_FreshBoardIsKept: an instance's Board is built once and then follows its
// log: its own writes and events that leave the Board alone keep it, and another
// instance's Board change is applied from its board.recorded event, without a build, on
// SQLite and PostgreSQL; an install by the other instance, which changes what the Board
// declares, builds it once (docs/architecture.md, "The project state and its driver").
func TestAuthority_FreshBoardIsKept(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			p := newPair(t, be.open)
			ctx := t.Context()
			by := p.admin.Principal()
			before := p.a.BoardBuilds("default")
			for _, user := range []string{"a", "b", "c"} {
				if err := p.a.Commit(ctx, "default", by, assertRoster(user, "reader")); err != nil {
					t.Fatal(err)
				}
				if _, err := p.a.Cases(ctx, p.admin, "default"); err != nil {
					t.Fatal(err)
				}
			}
			// Events that leave the Board alone (an agent) do not make it rebuild either.
			if _, err := p.a.Directory().CreateAgent(ctx, p.admin, "default", contract.CreateAgentRequest{Name: "helper"}); err != nil {
				t.Fatal(err)
			}
			boardState(t, p.a)
			if got := p.a.BoardBuilds("default"); got != before {
				t.Errorf("one instance rebuilt its Board %d times over its own writes, want 0", got-before)
			}

			// Another instance's Board changes (a batch, a Case opened, a Case held) are
			// applied, not built: A then shows what B shows.
			if err := p.b.Commit(ctx, "default", by, assertRoster("d", "reader")); err != nil {
				t.Fatal(err)
			}
			if err := p.b.Commit(ctx, "default", by, openAccessCase(by, "d")); err != nil {
				t.Fatal(err)
			}
			if _, err := p.b.HoldCase(ctx, p.admin, "default", "case-1", "checking by hand"); err != nil {
				t.Fatal(err)
			}
			nodes, cases := boardState(t, p.a)
			if got := p.a.BoardBuilds("default"); got != before {
				t.Errorf("after another instance's writes A's Board was built %d times, want 0: they are applied from their records", got-before)
			}
			nodesB, casesB := boardState(t, p.b)
			if diff := cmp.Diff(nodesB, nodes, valueEqual); diff != "" {
				t.Errorf("A's nodes differ from B's (-B +A):\n%s", diff)
			}
			if diff := cmp.Diff(casesB, cases, valueEqual); diff != "" {
				t.Errorf("A's Cases differ from B's (-B +A):\n%s", diff)
			}
			if n := countPredicate(nodes, "roster"); n != 4 || len(cases) != 1 || cases[0].Status != contract.CasePaused {
				t.Errorf("A's Board holds %d roster facts and Cases %+v, want 4 and case-1 paused", n, cases)
			}
			// A's own write on the Board it applied them to commits at once.
			if err := p.a.Commit(ctx, "default", by, assertRoster("e", "reader")); err != nil {
				t.Fatal(err)
			}

			// A Tool A locks on a Connection, its approval set and the Connection revoked
			// change the direct Actions B's Board declares: applied from their events,
			// with no build, B's Board declares what A's (built again) declares.
			bBuilds := p.b.BoardBuilds("default")
			if _, err := p.a.Directory().CreateConnection(ctx, p.admin, "default", contract.CreateConnectionRequest{Name: "notes"}); err != nil {
				t.Fatal(err)
			}
			for _, d := range []contract.ToolDescriptor{notesList, notesWrite} {
				if _, err := p.a.Directory().LockTool(ctx, p.admin, "default", "notes", contract.ToolLock{Tool: string(d.Tool), Digest: d.Digest, Descriptor: &d}); err != nil {
					t.Fatal(err)
				}
			}
			sameActions(t, "two Tools locked", p.a, p.b, 2)
			if _, err := p.a.Directory().SetToolApproval(ctx, p.admin, "default", "notes", string(notesList.Tool), contract.ApprovalPerson); err != nil {
				t.Fatal(err)
			}
			sameActions(t, "an approval set", p.a, p.b, 2)
			if _, err := p.a.Directory().UnlockTool(ctx, p.admin, "default", "notes", string(notesWrite.Tool)); err != nil {
				t.Fatal(err)
			}
			sameActions(t, "a Tool unlocked", p.a, p.b, 1)
			if _, err := p.a.Directory().RevokeConnection(ctx, p.admin, "default", "notes"); err != nil {
				t.Fatal(err)
			}
			sameActions(t, "the Connection revoked", p.a, p.b, 0)
			if got := p.b.BoardBuilds("default"); got != bBuilds {
				t.Errorf("B's Board was built %d times over A's tool locks, want 0: they are applied from their events", got-bBuilds)
			}

			// An install by B changes what A's Board declares: applied from its event, the
			// release read by its id and checked by its digest, with no build, A's Board
			// is then the Board a start builds from the store.
			aBuilds := p.a.BoardBuilds("default")
			if _, err := p.b.InstallCapability(ctx, p.admin, "default", authoritytest.ReadPackage(t, "testdata/calc")); err != nil {
				t.Fatal(err)
			}
			nodes, cases = boardState(t, p.a)
			if got := p.a.BoardBuilds("default"); got != aBuilds {
				t.Errorf("after another instance's install A's Board was built %d times, want 0: it is applied from its event", got-aBuilds)
			}
			fresh := newAuthorityOn(t, p.stores[1], p.key)
			if err := fresh.Restore(ctx); err != nil {
				t.Fatal(err)
			}
			nodesF, casesF := boardState(t, fresh)
			if diff := cmp.Diff(nodesF, nodes, valueEqual); diff != "" {
				t.Errorf("A's nodes differ from a fresh build's (-fresh +A):\n%s", diff)
			}
			if diff := cmp.Diff(casesF, cases, valueEqual); diff != "" {
				t.Errorf("A's Cases differ from a fresh build's (-fresh +A):\n%s", diff)
			}
			if diff := cmp.Diff(wholeView(t, fresh), wholeView(t, p.a), valueEqual); diff != "" {
				t.Errorf("A's Board shows another View than a fresh build's (-fresh +A):\n%s", diff)
			}
		})
	}
}

// TestAuthority_WriteInTxChecksTheBoard: a write that checks its Board inside its
// transaction rather than reading the head first (a worker's report) runs on the Board
// it has while no other instance changed it, and when another one did, finds it there
// and runs again on the Board caught up (docs/architecture.md, the write sequence).
func TestAuthority_WriteInTxChecksTheBoard(t *testing.T) {
	p := newPair(t, sharedBackends[0].open)
	ctx := t.Context()
	by := p.admin.Principal()
	if err := p.a.Commit(ctx, "default", by, assertRoster("a", "reader")); err != nil {
		t.Fatal(err)
	}
	rosters := func(want, attempts int) {
		t.Helper()
		seen := 0
		n, err := p.a.WriteInTx(ctx, "default", func(b *board.Board) {
			nodes := b.Nodes()
			seen = 0
			for _, nd := range nodes {
				if nd.Atom != nil && nd.Atom.Predicate == "roster" {
					seen++
				}
			}
		})
		if err != nil {
			t.Fatalf("WriteInTx: %v", err)
		}
		if n != attempts || seen != want {
			t.Errorf("WriteInTx ran %d attempts on a Board of %d roster facts, want %d on %d", n, seen, attempts, want)
		}
	}
	rosters(1, 1) // its own write: the Board it has is the log's
	if err := p.b.Commit(ctx, "default", by, assertRoster("b", "reader")); err != nil {
		t.Fatal(err)
	}
	rosters(2, 2) // another instance's write: found in the transaction, then caught up
	rosters(2, 1)
}

// sameActions fails unless a's and b's Boards declare the same Actions, direct ones
// numbering direct.
func sameActions(t *testing.T, after string, a, b *authority.Authority, direct int) {
	t.Helper()
	actions := func(x *authority.Authority) []contract.ActionEntry {
		var out []contract.ActionEntry
		if err := x.View(t.Context(), "default", func(bd *board.Board) error {
			out = bd.View(board.ViewRequest{Principal: "member:ada"}).Actions.Items
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := actions(a), actions(b)
	if diff := cmp.Diff(want, got, valueEqual); diff != "" {
		t.Errorf("after %s B's Board declares other Actions than A's (-A +B):\n%s", after, diff)
	}
	n := 0
	for _, e := range got {
		if strings.Contains(e.Name, "notes") {
			n++
		}
	}
	if n != direct {
		t.Errorf("after %s B's Board declares %d direct Actions, want %d: %+v", after, n, direct, got)
	}
}

func assertRoster(user, level string) func(b *board.Board) (boards.Change, error) {
	return func(b *board.Board) (boards.Change, error) {
		res, err := b.ApplyBatch(board.Author{Principal: "member:test", Tier: contract.TierAttested},
			contract.Batch{Operations: []contract.Operation{{Op: contract.OpAssertFact,
				Atom: &contract.Atom{Predicate: "roster", Args: contract.Args{"user": contract.StringValue(user), "level": contract.StringValue(level)}}}}})
		if err != nil {
			return boards.Change{}, err
		}
		return boards.Change{Nodes: res.Changes, Event: event.BatchAppliedData{NodeIDs: res.NodeIDs, Changes: res.Changes}}, nil
	}
}

func countPredicate(nodes []contract.Node, predicate string) int {
	n := 0
	for _, nd := range nodes {
		if nd.Atom != nil && nd.Atom.Predicate == predicate {
			n++
		}
	}
	return n
}

// isCode reports whether err carries code.
func isCode(err error, code contract.Code) bool {
	ce, ok := errors.AsType[*contract.Error](err)
	return ok && ce.Code == code
}

// twoInstances opens two stores over one database with open (a sharedBackends entry's)
// and returns the ops fixture over the first and a bare authority, another instance,
// over the second, under the fixture's key and clock.
func twoInstances(t *testing.T, open func(t *testing.T) (store.Store, store.Store)) (*opsFixture, *authority.Authority) {
	t.Helper()
	s1, s2 := open(t)
	f := opsFixtureOver(t, s1, time.Millisecond)
	return f, authoritytest.Bare(t, authoritytest.Options{Store: s2, Key: identity.Key{7}, Now: f.clock.Now})
}
