package operation

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog/eventlogtest"
	"github.com/docketrun/docket/internal/contract"
)

// TestLedger_GateMoved: an admission's transaction runs the write gate again exactly when
// the ledger, caught up there, applied an event the gate of its Agent decides on after
// the head the gate read at (gate.go, gateMovedLocked): a Board change, a policy or an
// autonomy event, a change of the setup or of a profile, an event of the Agent's own
// Operations; never another Agent's Operations, a lease, a conversation or a task.
func TestLedger_GateMoved(t *testing.T) {
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	admitted := func(agent string) event.Payload {
		return event.OpAdmittedData(event.Operation{Agent: agent, Ordinal: 1, Tool: contract.ToolApplyBatch, State: contract.OpDone})
	}
	tests := []struct {
		name string
		p    event.Payload
		want bool
	}{
		{"the agent's own Operation", admitted("a1"), true},
		{"another Agent's Operation", admitted("a2"), false},
		{"a Board change", event.BatchAppliedData{NodeIDs: []string{"n1"}}, true},
		{"a policy publication", event.PolicyPublishedData{PolicyVersion: contract.PolicyVersion{Kind: contract.PolicyAutonomy, Version: 2,
			File: "a.toml", Text: "[autonomy_policy]\ndefault_level = \"attended\"\n"}}, true},
		{"an Agent's level", event.LevelSetData{Agent: "a2", Level: "manual"}, true},
		{"a Connection", event.ConnectionCreatedData{Connection: contract.Connection{ID: "c1", Project: "p", Name: "laptop"}}, true},
		{"a profile", event.ProfileSetData{Agent: "a1"}, true},
		{"a lease", event.LeaseAcquiredData{}, false},
		{"a conversation", event.ConversationSavedData{}, false},
		{"a task", event.TaskPostedData{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The gate read the Board and the policies at seq 1, the ledger at seq 1.
			l := newLedgerState()
			e := eventlogtest.Event(t, "p", 2, "system", at, tc.p)
			if err := l.Apply(e); err != nil {
				t.Fatalf("Apply(%s): %v", e.Type, err)
			}
			if got := l.gateMovedLocked("a1", 1, 1); got != tc.want {
				t.Errorf("after %s at seq 2, gateMovedLocked = %v, want %v", e.Type, got, tc.want)
			}
			if l.gateMovedLocked("a1", 2, 2) {
				t.Errorf("after %s at seq 2, a gate that read at seq 2 moved", e.Type)
			}
		})
	}
}
