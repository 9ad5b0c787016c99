package authority_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store/sqlite"
	"github.com/docketrun/docket/internal/store/storecount"
)

// TestDecide_ReadsTheHeadOnce: a decision reads the log's head once outside its
// transaction, where its write catches the Board up; the Request, the delegation policy
// in force and the catch-up after its commit use that head and the one the commit left
// (docs/architecture.md, "Catch-ups from memory"), as an admission does. It read five.
func TestDecide_ReadsTheHeadOnce(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	count := storecount.Wrap(st)
	f := opsFixtureOver(t, count, time.Second)
	var delivered []int64
	for _, verdict := range []contract.Verdict{contract.VerdictApprove, contract.VerdictDeny} {
		r := f.pendingMark(t, "topic-"+string(verdict), delivered...)
		delivered = append(delivered, r.Ordinal)
		count.Reset()
		got, err := f.ops.Operations().Decide(t.Context(), f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: verdict, Reason: "test"})
		if err != nil {
			t.Fatalf("Decide %s: %v", verdict, err)
		}
		if want := map[contract.Verdict]contract.RequestState{contract.VerdictApprove: contract.RequestApproved,
			contract.VerdictDeny: contract.RequestDenied}[verdict]; got.State != want {
			t.Errorf("Decide %s = %s, want %s", verdict, got.State, want)
		}
		if c := count.Counts(); c.ByMethod["Head"] != 1 {
			t.Errorf("Decide %s read the head %d times outside its transaction, want 1: %v", verdict, c.ByMethod["Head"], c.HeadsFrom)
		}
	}
}
