package authority_test

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestAuthority_WorkersSupervised: a lease its worker released shows no expiry (the store keeps the
// epoch there, which a page would print as 1970), and the state docket start reports of
// the worker it runs for a Connection is shown with it; a report for a Connection the
// project does not have is refused.
func TestAuthority_WorkersSupervised(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	l := f.startup(t, "w-1")
	if _, err := f.d.ReleaseLease(ctx, f.conn, contract.LeaseRequest{WorkerID: l.WorkerID, Generation: l.Generation}); err != nil {
		t.Fatal(err)
	}
	st := contract.RuntimeStatus{State: contract.RuntimeCrashLoop, Restarts: 3, Reason: `manifest_invalid: fix tools.json: unknown field "adaptor" (did you mean "adapter"?)`}
	if _, err := f.a.ReportWorkerRuntime(ctx, f.admin, "default", "laptop", st); err != nil {
		t.Fatal(err)
	}
	ws, err := f.a.Workers(ctx, f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 {
		t.Fatalf("Workers = %+v, want laptop", ws)
	}
	w := ws[0]
	if w.Lease != contract.LeaseExpired || w.ExpiresAt != nil {
		t.Errorf("a released lease = %s expiring %v, want expired with no expiry", w.Lease, w.ExpiresAt)
	}
	if w.Supervised == nil || w.Supervised.State != st.State || w.Supervised.Reason != st.Reason || w.Supervised.Reported.IsZero() {
		t.Errorf("Supervised = %+v, want the report %+v with when it was recorded", w.Supervised, st)
	}
	for _, tt := range []struct {
		name, conn string
		st         contract.RuntimeStatus
		want       contract.Code
	}{
		{"an unknown Connection", "desktop", contract.RuntimeStatus{State: contract.RuntimeRunning}, contract.CodeNotFound},
		{"an unknown state", "laptop", contract.RuntimeStatus{State: "dozing"}, contract.CodeInvalidArgument},
	} {
		if _, err := f.a.ReportWorkerRuntime(ctx, f.admin, "default", tt.conn, tt.st); contract.CodeOf(err) != tt.want {
			t.Errorf("%s: ReportWorkerRuntime = %v, want %s", tt.name, err, tt.want)
		}
	}
}
