package authority_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

// TestDispatcher_HopCallReadsHeadWithLeases: a claim's and a report's transaction lock
// the Connection's lease rows and read the log's head in one store call
// (Tx.LockLeasesHead), whose head the write sequence's head read takes without asking
// the store again (docs/architecture.md, "One commit function"). They took a Tx.Head of
// their own. A report that changes the Board also locks the head to check the Board
// fresh before it writes (boards.Write.LockFresh). A Poll, outside a transaction, reads
// the head and the lease rows in one call (store.Reader.LeasesHead).
func TestDispatcher_HopCallReadsHeadWithLeases(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	count := storecount.Wrap(st)
	f := newHopFixtureOn(t, opsFixtureOver(t, count, time.Millisecond))
	l := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	count.Reset()
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 {
		t.Fatalf("Poll served %d rows, want 1", len(rows))
	}
	// A Poll reads the head it serves at and the lease rows it checks in one store call.
	if got := count.Counts(); got.ByMethod["LeasesHead"] != 1 || got.ByMethod["Head"] != 0 || got.ByMethod["Leases"] != 0 || got.HeadReads != 1 {
		t.Errorf("poll: %d LeasesHead, %d Head, %d Leases, %d head reads; want 1, 0, 0 and 1: %v",
			got.ByMethod["LeasesHead"], got.ByMethod["Head"], got.ByMethod["Leases"], got.HeadReads, got.ByMethod)
	}
	calls := []struct {
		name  string
		call  func() error
		heads int64 // head reads
	}{
		{"claim", func() error { return f.claim(l, rows[0]) }, 1},
		{"report", func() error {
			_, err := f.d.Report(t.Context(), f.conn, okReport(l, rows[0], "a.txt"))
			return err
		}, 2},
	}
	for _, c := range calls {
		count.Reset()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := count.Counts()
		if got.Txs != 1 || got.ByMethod["Tx.LockLeasesHead"] != 1 || got.ByMethod["Tx.Head"] != 0 || got.HeadReads != c.heads {
			t.Errorf("%s: %d transactions, %d Tx.LockLeasesHead, %d Tx.Head, %d head reads; want 1, 1, 0 and %d: %v",
				c.name, got.Txs, got.ByMethod["Tx.LockLeasesHead"], got.ByMethod["Tx.Head"], got.HeadReads, c.heads, got.ByMethod)
		}
	}
}
