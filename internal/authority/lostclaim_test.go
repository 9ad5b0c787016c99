package authority_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// TestDispatcher_ReconcileLostClaim: an Operation at a worker whose claim the log lacks,
// as older versions left a Source-free Tool's work (its claim stored as null), is
// reconciled by a person; one whose claim the log holds still waits for its worker.
func TestDispatcher_ReconcileLostClaim(t *testing.T) {
	f := newHopFixture(t)
	ctx := t.Context()
	id := f.fetch(t, "a.txt")
	err := f.st.Update(ctx, func(tx store.Tx) error {
		for _, e := range []store.NewEvent{
			{Type: event.WorkClaimed, Data: json.RawMessage(`{}`)}, // what a null claim decodes to
			{Type: event.OpChanged, Data: json.RawMessage(fmt.Sprintf(`{"agent":%q,"ordinal":1,"state":"running","stage":"at_worker"}`, f.agent.ID))},
		} {
			e.Project, e.At, e.Actor = "default", f.clock.Now(), "system"
			if _, err := tx.Append(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.d.Reconcile(ctx, f.admin, "default", id, contract.ReconcileRequest{Outcome: "failed", Reason: "the claim was lost"})
	if err != nil || e.State != contract.OpFailed {
		t.Fatalf("Reconcile of the Operation whose claim was lost = %+v, %v; want failed", e, err)
	}

	l := f.startup(t, "wkr-a")
	f.call(t, f.ops, &contract.ApplyActionInput{Action: "fetch", Params: contract.Args{"path": contract.StringValue("b.txt")}}, 1)
	rows := f.poll(t, l, fetchTool)
	if err := f.claim(l, rows[0]); err != nil {
		t.Fatal(err)
	}
	_, err = f.d.Reconcile(ctx, f.admin, "default", rows[0].ID, contract.ReconcileRequest{Outcome: "done"})
	wantCode(t, err, contract.CodeNotNeedsPerson)
}
