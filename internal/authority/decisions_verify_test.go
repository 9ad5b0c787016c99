package authority_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/contract"
)

// TestAuthority_TamperedDecision changes the decisions table behind the log's back and
// checks that verify, on serve and offline, names the row and what differs instead of
// passing: the store keeps a decision's rules, the log says who decided.
func TestAuthority_TamperedDecision(t *testing.T) {
	tests := []struct {
		name   string
		tamper string // $1 is the decided request, $2 the pending one; each statement names both, as PostgreSQL types only the parameters it sees
		node   int    // 1: the decided request is named, 2: the pending one
		field  string
	}{
		{"decider swapped", `UPDATE decisions SET decided_by = 'member:mallory' WHERE request = $1 AND request <> $2`, 1, "decidedBy"},
		{"verdict flipped", `UPDATE decisions SET verdict = 'approve' WHERE request = $1 AND request <> $2`, 1, "verdict"},
		{"time moved", `UPDATE decisions SET at = at + 1 WHERE request = $1 AND request <> $2`, 1, "at"},
		{"row removed", `DELETE FROM decisions WHERE request = $1 AND request <> $2`, 1, "missing"},
		{"row forged", `INSERT INTO decisions (project, request, digest, requested_by, decided_by, verdict, at)
			SELECT project, id, digest, requested_by, 'member:mallory', 'approve', at FROM requests WHERE id = $2 AND id <> $1`, 2, "extra"},
	}
	for _, be := range tamperBackends {
		for _, tt := range tests {
			t.Run(be.name+"/"+tt.name, func(t *testing.T) {
				st, exec := be.open(t)
				f := opsFixtureOver(t, st, time.Minute)
				ctx := t.Context()
				if _, err := f.a.InstallCapability(ctx, f.admin, "default", authoritytest.ReadPackage(t, "testdata/grant")); err != nil {
					t.Fatalf("InstallCapability(grant): %v", err)
				}
				f.roster(t, "ann", "reader", "")
				f.roster(t, "bob", "reader", "")
				if ans := f.call(t, f.ops, grantCall(f.openAccess(t, "ann"), "one"), 1); state(ans) != contract.OpWaitingForDecision {
					t.Fatalf("grant ann = %s, want waiting_for_decision", state(ans))
				}
				decided := f.pendingRequest(t)
				if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", decided.ID, contract.Decision{Digest: decided.Digest, Verdict: contract.VerdictDeny, Reason: "no"}); err != nil {
					t.Fatalf("Decide: %v", err)
				}
				if ans := f.call(t, f.ops, grantCall(f.openAccess(t, "bob", 1, 2, 3), "two"), 1, 2, 3, 4); state(ans) != contract.OpWaitingForDecision {
					t.Fatalf("grant bob = %s, want waiting_for_decision", state(ans))
				}
				pending := f.pendingRequest(t)
				if rep, err := f.a.VerifyEvents(ctx, f.admin, "default"); err != nil || !rep.OK {
					t.Fatalf("VerifyEvents before tampering = %+v, %v", rep, err)
				}

				exec(t, tt.tamper, string(decided.ID), string(pending.ID))

				node := "decision:" + string(decided.ID)
				if tt.node == 2 {
					node = "decision:" + string(pending.ID)
				}
				rep, err := f.a.VerifyEvents(ctx, f.admin, "default")
				if err != nil {
					t.Fatal(err)
				}
				if rep.OK || rep.Broken == nil {
					t.Fatalf("VerifyEvents after tampering = %+v, want a broken link", rep)
				}
				want := contract.BrokenLink{Node: node, Field: tt.field}
				if diff := cmp.Diff(want, *rep.Broken, cmpopts.IgnoreFields(contract.BrokenLink{}, "Seq", "Want", "Got")); diff != "" {
					t.Errorf("VerifyEvents' broken link (-want +got):\n%s", diff)
				}
				off, err := boards.VerifyLog(ctx, st, "default", nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(rep.Broken, off.Broken); diff != "" {
					t.Errorf("offline verify differs from serve's (-serve +offline):\n%s", diff)
				}
			})
		}
	}
}
