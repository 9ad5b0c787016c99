package authority_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

// benchBoard is an authority on SQLite with the calc capability installed and its Board
// built.
func benchBoard(b *testing.B) (*authority.Authority, identity.Caller) {
	b.Helper()
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "docket.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	p := authoritytest.New(b, authoritytest.Options{Store: st, Capability: "testdata/grant"})
	return p.A, p.Admin
}

// BenchmarkAuthority_ViewFresh is a read of a Board nobody else wrote: the freshness
// check costs one read of the log's head.
func BenchmarkAuthority_ViewFresh(b *testing.B) {
	a, _ := benchBoard(b)
	for b.Loop() {
		if err := a.View(b.Context(), "default", func(*board.Board) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthority_CommitOwn is one instance's Board write: it locks the head and
// checks it in the same transaction, and does not rebuild.
func BenchmarkAuthority_CommitOwn(b *testing.B) {
	a, admin := benchBoard(b)
	i := 0
	for b.Loop() {
		i++
		if err := a.Commit(b.Context(), "default", admin.Principal(), assertRoster(fmt.Sprint(i), "reader")); err != nil {
			b.Fatal(err)
		}
	}
	if n := a.BoardBuilds("default"); n > 1 {
		b.Fatalf("the Board was built %d times", n)
	}
}

// BenchmarkAuthority_CommitShared is two instances over one database (SQLite, and
// PostgreSQL when DOCKET_TEST_POSTGRES names a server) taking turns at one Board of 500
// facts: each write (one op is one write of each) first catches up the other instance's
// last write (docs/architecture.md, "The write sequence", step 2). builds/op is how
// often an instance built its Board from the store meanwhile, and store-calls/op and
// head-reads/op what both instances asked their stores.
func BenchmarkAuthority_CommitShared(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) func() store.Store
	}{
		{"sqlite", func(b *testing.B) func() store.Store {
			path := filepath.Join(b.TempDir(), "docket.db")
			return func() store.Store {
				st, err := sqlite.Open(b.Context(), path)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				return st
			}
		}},
		{"postgres", func(b *testing.B) func() store.Store {
			dsn := authoritytest.PostgresDSN(b)
			return func() store.Store {
				st, err := postgres.Open(b.Context(), dsn)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				return st
			}
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) { benchCommitShared(b, be.open(b)) })
	}
}

func benchCommitShared(b *testing.B, open func() store.Store) {
	ctx := b.Context()
	key := identity.Key{1, 2, 3, 4, 5, 6, 7, 8}
	counts := []*storecount.Store{storecount.Wrap(open()), storecount.Wrap(open())}
	p := authoritytest.New(b, authoritytest.Options{Store: counts[0], Key: key, Capability: "testdata/grant"})
	by := p.Admin.Principal()
	for i := range 500 {
		if err := p.A.Commit(ctx, "default", by, assertRoster(fmt.Sprint("seed-", i), "reader")); err != nil {
			b.Fatal(err)
		}
	}
	other := authoritytest.Bare(b, authoritytest.Options{Store: counts[1], Key: key})
	if err := other.Restore(ctx); err != nil {
		b.Fatal(err)
	}
	instances := []*authority.Authority{p.A, other}
	builds := func() int { return p.A.BoardBuilds("default") + other.BoardBuilds("default") }
	before := builds()
	for _, c := range counts {
		c.Reset()
	}
	i := 0
	for b.Loop() {
		for _, a := range instances {
			i++
			if err := a.Commit(ctx, "default", by, assertRoster(fmt.Sprint(i), "reader")); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(builds()-before)/float64(b.N), "builds/op")
	var calls, heads int64
	for _, c := range counts {
		n := c.Counts()
		calls, heads = calls+n.Calls, heads+n.HeadReads
	}
	b.ReportMetric(float64(calls)/float64(b.N), "store-calls/op")
	b.ReportMetric(float64(heads)/float64(b.N), "head-reads/op")
}
