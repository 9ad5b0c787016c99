package authority_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// TestDispatcher_RevokedOnAnotherInstance shows that the hop refuses a Connection at once
// when another docket serve over the same store revoked it: the hop reads the revocation
// from the operation ledger's projection of the log (operation/setup.go), caught up inside
// the transaction of a claim, a report, a renewal or a release and at the head a Poll
// read, not from a row read on each call. The worker here calls the Dispatcher directly, past the door's
// authentication, so nothing but that projection stands between it and the work.
func TestDispatcher_RevokedOnAnotherInstance(t *testing.T) {
	tests := []struct {
		name string
		// before runs on the served row before the revocation; after is the hop call
		// that must then be refused.
		before func(t *testing.T, w *authoritytest.Worker, row contract.WorkRow)
		after  func(t *testing.T, w *authoritytest.Worker, row contract.WorkRow) error
	}{
		{"poll", nil, func(t *testing.T, w *authoritytest.Worker, _ contract.WorkRow) error {
			_, err := w.Poll(t.Context())
			return err
		}},
		{"claim", nil, func(t *testing.T, w *authoritytest.Worker, row contract.WorkRow) error {
			return w.Claim(t.Context(), row)
		}},
		{"report", func(t *testing.T, w *authoritytest.Worker, row contract.WorkRow) {
			if err := w.Claim(t.Context(), row); err != nil {
				t.Fatalf("claim before the revocation: %v", err)
			}
		}, func(t *testing.T, w *authoritytest.Worker, row contract.WorkRow) error {
			return w.Report(t.Context(), row)
		}},
		{"renew", nil, func(t *testing.T, w *authoritytest.Worker, _ contract.WorkRow) error {
			return w.Renew(t.Context())
		}},
		{"release", nil, func(t *testing.T, w *authoritytest.Worker, _ contract.WorkRow) error {
			return w.Release(t.Context())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOpsFixture(t, time.Millisecond)
			other := authoritytest.Open(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
			w := notesWorker(t, f, true)
			caseID := openExploration(t, f)
			f.call(t, f.ops, &contract.ApplyActionInput{CaseID: caseID, Action: "acme.notes.list@1",
				Params: contract.Args{"dir": contract.StringValue("docs"), "source": contract.StringValue("notes")}}, 1)
			row := w.Served(t, f.agent.ID, 2) // this instance's ledger holds the Connection live
			if tt.before != nil {
				tt.before(t, w, row)
			}
			if _, err := other.Directory().RevokeConnection(t.Context(), f.admin, "default", "notes"); err != nil {
				t.Fatal(err)
			}
			wantCode(t, tt.after(t, w, row), contract.CodeCredentialRevoked)
		})
	}
}
