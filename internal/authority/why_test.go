package authority_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// TestAuthority_Why_NamesTheSource: a fact a worker's report made names the Tool, the
// Action and release that return it, and the Source bound where the Tool is locked.
func TestAuthority_Why_NamesTheSource(t *testing.T) {
	f := newHopFixture(t)
	l := f.startup(t, "wkr-a")
	f.fetch(t, "a.txt")
	rows := f.poll(t, l, fetchTool)
	if len(rows) != 1 {
		t.Fatalf("Poll served %+v, want one row", rows)
	}
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Report(t.Context(), f.conn, okReport(l, rows[0], "a.txt")); err != nil {
		t.Fatal(err)
	}
	var id string
	err := f.a.View(t.Context(), "default", func(b *board.Board) error {
		got, err := b.Query(contract.Atom{Predicate: "fetched"}, "", 10)
		if err == nil && len(got.Items) == 1 {
			id = got.Items[0].NodeID
		}
		return err
	})
	if err != nil || id == "" {
		t.Fatalf("the fetched fact is not on the Board: %v", err)
	}
	w, err := f.a.Why(t.Context(), f.admin, "default", id)
	if err != nil {
		t.Fatal(err)
	}
	at := w.Root.Attestation
	if at == nil || len(at.Sources) != 1 {
		t.Fatalf("why = %+v, want one attesting Source", w.Root)
	}
	got := []string{string(w.Root.Kind), w.Root.Tier.String(), string(w.Root.CreatedBy), at.Tool, at.Action, at.Release,
		at.Sources[0].Name, string(at.Sources[0].Connection)}
	want := []string{"fact", "attested", "tool:test.fetch@1", "test.fetch@1", "fetch", "test.ops@1.0.0", "workspace", string(f.conn.ID)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("why of the fetched fact (-want +got):\n%s", diff)
	}
	_, err = f.a.Why(t.Context(), f.agent, "default", id)
	wantCode(t, err, contract.CodeForbidden)
}

// TestAuthority_Workers: a Connection's lease reads never before a worker polls, held
// while its lease lasts, and expired after.
func TestAuthority_Workers(t *testing.T) {
	f := newHopFixture(t)
	lease := func() contract.WorkerStatus {
		t.Helper()
		ws, err := f.a.Workers(t.Context(), f.admin, "default")
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != 1 || ws[0].Connection.ID != f.conn.ID || len(ws[0].Tools) != 1 || len(ws[0].Sources) != 1 {
			t.Fatalf("workers = %+v, want laptop with its Tool and Source", ws)
		}
		return ws[0]
	}
	if w := lease(); w.Lease != contract.LeaseNever || w.ExpiresAt != nil {
		t.Errorf("before any poll: %+v, want never", w)
	}
	f.startup(t, "wkr-a")
	if w := lease(); w.Lease != contract.LeaseHeld || w.WorkerID != "wkr-a" || w.Generation != 1 {
		t.Errorf("after the startup poll: %+v, want held by wkr-a, generation 1", w)
	}
	f.clock.Add(time.Minute)
	if w := lease(); w.Lease != contract.LeaseExpired {
		t.Errorf("after the lease ran out: %+v, want expired", w)
	}
}
