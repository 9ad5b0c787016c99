package operation

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// TestOutcomeResult checks that an Action's Result is json.Marshal's of the map it was
// encoded from before, whatever the Action's name holds.
func TestOutcomeResult(t *testing.T) {
	tests := []struct {
		action        string
		rows, changes int
	}{
		{"load", 1, 0},
		{"load", 0, 12},
		{"", 0, 0},
		{`a "quoted" <b> & c\d`, 3, 4},
		{"caf\u00e9 \u2028 \x01", 1 << 20, 7},
		{"\xff", 2, 2},
	}
	for _, tt := range tests {
		want, err := json.Marshal(map[string]any{"action": tt.action, "rows": tt.rows, "changes": tt.changes})
		if err != nil {
			t.Fatal(err)
		}
		got, err := outcomeResult(tt.action, tt.rows, tt.changes)
		if err != nil || string(got) != string(want) {
			t.Errorf("outcomeResult(%q, %d, %d) = %s, %v; want %s", tt.action, tt.rows, tt.changes, got, err, want)
		}
	}
}

// TestHeld_WaitFollowsOnlyWhileRunning checks that a held call whose Operation is settled
// already (a Board write, a refusal) ends without following the project's log, whose
// goroutine it would stop at once, and that one whose Operation runs follows it. The
// calls of the driver's Follow are counted, not the goroutines, which may or may not
// have reached the store before the hold stopped them.
func TestHeld_WaitFollowsOnlyWhileRunning(t *testing.T) {
	tests := []struct {
		name    string
		state   contract.OperationState
		follows int
	}{
		{"settled already", contract.OpDone, 0},
		{"refused already", contract.OpRefused, 0},
		{"running", contract.OpRunning, 1}, // held until the bound, which ends it
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			const project = contract.ProjectID("p")
			at := time.Now().UTC()
			if err := st.Update(ctx, func(tx store.Tx) error {
				if err := tx.CreateProject(ctx, store.Project{ID: string(project), Name: "p", CreatedAt: at}); err != nil {
					return err
				}
				if err := eventlog.Append(ctx, tx, project, "system", at, event.OpAdmittedData(event.Operation{Agent: "a", Ordinal: 1, Tool: "ApplyBatch", State: contract.OpRunning})); err != nil {
					return err
				}
				if tt.state == contract.OpRunning {
					return nil
				}
				return eventlog.Append(ctx, tx, project, "system", at, event.OpChangedData(event.Operation{Agent: "a", Ordinal: 1, State: tt.state}))
			}); err != nil {
				t.Fatal(err)
			}
			o := New(Deps{Store: eventlog.Remember(st, nil)}, Config{HoldBound: time.Millisecond})
			t.Cleanup(o.Close)
			follows := 0
			follow := o.follow
			o.follow = func(p contract.ProjectID) (func(), error) {
				follows++
				return follow(p)
			}
			// The ledger as admission leaves it: caught up past the Operation's events.
			l := o.ledger(project)
			l.lock()
			err = l.catchUpLocked(ctx, o.store)
			l.unlock()
			if err != nil {
				t.Fatal(err)
			}
			h := &Held{o: o, c: identity.Caller{Kind: contract.PrincipalAgent, ID: "a", Projects: []contract.ProjectID{project}}, ad: admission{ordinal: 1}}
			if err := h.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if follows != tt.follows {
				t.Errorf("the held call followed the log %d times, want %d", follows, tt.follows)
			}
		})
	}
}
